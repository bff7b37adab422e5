"""The script language, static side: the checker (rules R00–R12), callsites σ, call-expression
fingerprints, annotation and the static spend bound.

    from frostline.script import check, sites, annotate
    report = check(source, envelope)          # never executes the source
    if report.valid:
        annotated = annotate(source)          # _site="σ" in every ctx.run; lines unchanged
"""

from frostline.script.annotate import annotate
from frostline.script.checker import check, check_bytes
from frostline.script.report import RULES, Facts, Report, SiteInfo, SpendBound, Violation
from frostline.script.sites import fingerprint, sites
from frostline.script.spend import Prior

__all__ = ["RULES", "Facts", "Prior", "Report", "SiteInfo", "SpendBound", "Violation",
           "annotate", "check", "check_bytes", "fingerprint", "sites"]
