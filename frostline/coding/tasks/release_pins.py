"""The pinned release pairs the released-bug population is built from.

Each pair is two consecutive releases of one package, N and N+1, both sdists pinned by version
and SHA-256 like the injected population's archives (`pins.py`). They are the pairs that
passed the screen of `releases.screen` when the last 25 final releases of each pinned package
were compared by `frostline tasks search` (one source file changed by at most
`releases.MAX_FIX_LINES` lines, and a test file added or changed); whether a new test fails on
N and passes on N+1 is decided by the build, in the sandbox. The record of every pair compared
and why it was screened out is docs/released-search.jsonl.

A pair's layout (`import_root`, `mutate` = the source roots, `test_paths`) is the one of N+1
(decorator's suite is a module named `test.py`, which pytest collects only when named);
`_SETTINGS` holds what a package's suite needs to run offline in the sandbox whatever the
release: the same `--ignore`/`--deselect` rules and test dependencies as its injected pin.
"""

from __future__ import annotations

from dataclasses import dataclass

from frostline.coding.tasks.pins import Archive, PackageSpec

__all__ = ["RELEASE_PAIRS", "ReleasePair", "pairs_of"]


@dataclass(frozen=True)
class ReleasePair:
    """Release N (`older`) and release N+1 (`spec.archive`, with the suite's settings)."""

    spec: PackageSpec
    older: Archive

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def pair_id(self) -> str:
        """`name-N..N+1`, unique among the pins."""
        return f"{self.spec.name}-{self.older.version}..{self.spec.version}"


# What a suite needs to run in the sandbox (as in pins.py): extra pytest arguments, test deps.
_SETTINGS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    # the command-line tests start the script as a subprocess
    "tabulate": (("--ignore=test/test_cli.py",), ()),
    "iso8601": ((), ("pytz",)),
    # these three start the command line as a subprocess
    "python-slugify": ((
        "--deselect=tests/test_release.py::ReleaseRegressionTests::test_algorithm_cli",
        "--deselect=tests/test_release.py::ReleaseRegressionTests"
        "::test_cli_forwarding_and_real_module",
        "--deselect=tests/test_release.py::UppercaseHexReferenceTests"
        "::test_uppercase_reference_through_cli"), ("text-unidecode",)),
    # astroid is an optional dependency the environment does not carry
    "asttokens": (("--ignore=tests/test_astroid.py",), ()),
    # these run pyflakes as a subprocess (TestMain is a subclass); the sandbox has none
    # the first two run pyflakes as a subprocess (TestMain is a subclass); the sandbox has
    # none. The others compare CPython's own SyntaxError and decoding messages, which this
    # interpreter words otherwise than the one the older releases were tested on.
    "pyflakes": (("--deselect=pyflakes/test/test_api.py::IntegrationTests",
                  "--deselect=pyflakes/test/test_api.py::TestMain",
                  *(f"--deselect=pyflakes/test/test_api.py::CheckTests::test_{t}" for t in (
                      "eofSyntaxError", "invalidEscape", "multilineSyntaxError",
                      "nonDefaultFollowsDefaultSyntaxError", "nonKeywordAfterKeywordSyntaxError",
                      "misencodedFileUTF16"))), ()),
}


def _pair(name: str, import_root: str, mutate: tuple[str, ...], test_paths: tuple[str, ...],
          older: tuple[str, str, str], newer: tuple[str, str, str]) -> ReleasePair:
    args, deps = _SETTINGS.get(name, ((), ()))
    spec = PackageSpec(Archive(name, *newer), import_root=import_root, mutate=mutate,
                       test_paths=test_paths, test_args=args, deps=deps)
    return ReleasePair(spec, Archive(name, *older))


RELEASE_PAIRS: tuple[ReleasePair, ...] = (
    _pair('inflection', '.', ('inflection.py',), ('test_inflection.py',),
          ('0.3.0', 'inflection-0.3.0.tar.gz',
           'c6ab173181fd3bbee53187b7535f395ed802ef69d9f3bb5f8c2a5cdfb3e92d08'),
          ('0.3.1', 'inflection-0.3.1.tar.gz',
           '18ea7fb7a7d152853386523def08736aa8c32636b047ade55f7578c4edeb16ca')),
    _pair('semver', '.', ('semver.py',), ('test_semver.py', 'test_typeerror-274.py'),
          ('2.12.0', 'semver-2.12.0.tar.gz',
           '9661f6920fe546b70c7cdde8ca6420d852516efdfa2dbc1e58ab5972e773f43d'),
          ('2.13.0', 'semver-2.13.0.tar.gz',
           'fa0fe2722ee1c3f57eac478820c3a5ae2f624af8264cbdf9000c980ff7f75e3f')),
    _pair('cachetools', 'src', ('src/cachetools',), ('tests',),
          ('7.1.1', 'cachetools-7.1.1.tar.gz',
           '27bdf856d68fd3c71c26c01b5edc312124ed427524d1ddb31aa2b7746fe20d4b'),
          ('7.1.2', 'cachetools-7.1.2.tar.gz',
           'c1373e3cad0933dfb46bb04d04ef67b5204f8220eb906096dd89a76196053d57')),
    _pair('cachetools', 'src', ('src/cachetools',), ('tests',),
          ('7.1.7', 'cachetools-7.1.7.tar.gz',
           'a3e2a00b14d8f8a6b70c1dae7b4685e7ad3bc965c5b42124a2d6ce895da6cf50'),
          ('7.1.8', 'cachetools-7.1.8.tar.gz',
           '1221d547a0b24b7f26fa891d40d488b5258beab9aebd8ed68c729be3af849c43')),
    _pair('cachetools', 'src', ('src/cachetools',), ('tests',),
          ('7.1.8', 'cachetools-7.1.8.tar.gz',
           '1221d547a0b24b7f26fa891d40d488b5258beab9aebd8ed68c729be3af849c43'),
          ('7.2.0', 'cachetools-7.2.0.tar.gz',
           'bcac1a1b8da6909994a2957238a57b8140dab7c5c5c69a43669654fe87a33c1d')),
    _pair('python-slugify', '.', ('slugify',), ('tests',),
          ('9.1.0', 'python_slugify-9.1.0.tar.gz',
           '3f02e8a0639c61e37eca5a783aae09112796d15d331ee3d5372241b61ee05f1c'),
          ('9.1.1', 'python_slugify-9.1.1.tar.gz',
           'db48547ed6d43072af59c86c3bc80bfc3c6f4e88c130c99de11775d721a574b8')),
    _pair('parse', '.', ('parse.py',), ('test_parse.py',),
          ('1.11.1', 'parse-1.11.1.tar.gz',
           '870dd675c1ee8951db3e29b81ebe44fd131e3eb8c03a79483a58ea574f3145c2'),
          ('1.12.0', 'parse-1.12.0.tar.gz',
           '1b68657434d371e5156048ca4a0c5aea5afc6ca59a2fea4dd1a575354f617142')),
    _pair('parse', '.', ('parse.py',), ('test_parse.py',),
          ('1.13.1', 'parse-1.13.1.tar.gz',
           '7db848a42df2ec9751222c566782933ff1b4a0534bc93c70304c9922936f738e'),
          ('1.14.0', 'parse-1.14.0.tar.gz',
           '95a4f4469e37c57b5e924629ac99926f28bee7da59515dc5b8078c4c3e779249')),
    _pair('parse', '.', ('parse.py',), ('tests',),
          ('1.20.0', 'parse-1.20.0.tar.gz',
           'bd28bae37714b45d5894d77160a16e2be36b64a3b618c81168b3684676aa498b'),
          ('1.20.1', 'parse-1.20.1.tar.gz',
           '09002ca350ad42e76629995f71f7b518670bcf93548bdde3684fd55d2be51975')),
    _pair('parse', '.', ('parse.py',), ('tests',),
          ('1.20.1', 'parse-1.20.1.tar.gz',
           '09002ca350ad42e76629995f71f7b518670bcf93548bdde3684fd55d2be51975'),
          ('1.20.2', 'parse-1.20.2.tar.gz',
           'b41d604d16503c79d81af5165155c0b20f6c8d6c559efa66b4b695c3e5a0a0ce')),
    _pair('parse', '.', ('parse.py',), ('tests',),
          ('1.21.0', 'parse-1.21.0.tar.gz',
           '937725d51330ffec9c7a26fdb5623baa135d8ba8ed78817ea9523538844e3ce4'),
          ('1.21.1', 'parse-1.21.1.tar.gz',
           '825e1a88e9d9fb481b8d2ca709c6195558b6eaa97c559ad3a9a20aa2d12815a3')),
    _pair('parse', '.', ('parse',), ('tests',),
          ('1.22.0', 'parse-1.22.0.tar.gz',
           'd4987d68ccf08b6ba3bf80b5004ff7de61c4337cba2d8350ae5c9925794979d9'),
          ('1.22.1', 'parse-1.22.1.tar.gz',
           'd3a4740ec3da338e2b258b2d69741b731eadfddca59e24a14bc4ee5fce38c911')),
    _pair('parse', '.', ('parse',), ('tests',),
          ('1.22.2', 'parse-1.22.2.tar.gz',
           '8ff0b98202798b8cefa4f8fac06b670d6d00e5ec6ecbbacaf97ac0d0e93a54e6'),
          ('1.22.3', 'parse-1.22.3.tar.gz',
           '7e79bb39c72c3bf1613510fd5cdffe5baa9a7873892bef1d4566f1672c8a42f4')),
    _pair('tabulate', '.', ('tabulate.py',), ('test',),
          ('0.8.1', 'tabulate-0.8.1.tar.gz',
           'b9b4d2fc712c1e3b8f2970edf6d83fd8a329d0148de78bbe2755a79a96c190fa'),
          ('0.8.2', 'tabulate-0.8.2.tar.gz',
           'e4ca13f26d0a6be2a2915428dc21e732f1e44dad7f76d7030b2ef1ec251cf7f2')),
    _pair('tabulate', '.', ('tabulate.py',), ('test',),
          ('0.8.3', 'tabulate-0.8.3.tar.gz',
           '8af07a39377cee1103a5c8b3330a421c2d99b9141e9cc5ddd2e3263fea416943'),
          ('0.8.4', 'tabulate-0.8.4.tar.gz',
           'dde537a1c44e6d9d635b2489923513bef89fadb181819998cccdf2a99e652464')),
    _pair('iso8601', '.', ('iso8601',), ('iso8601/test_iso8601.py',),
          ('0.1.1', 'iso8601-0.1.1.tar.gz',
           '3316add952b3627ba2c099651d20feff5030388067aa270a8c92dc93a7a32f4f'),
          ('0.1.2', 'iso8601-0.1.2.tar.gz',
           '0230345877848683df9da52f297ad7a5fddec696b11dcdcfd7cf98cc0d5d9893')),
    _pair('iso8601', '.', ('iso8601',), ('iso8601/test_iso8601.py',),
          ('0.1.5', 'iso8601-0.1.5.tar.gz',
           'b3c641ddb7535e398df791b6b4b37c4d4c1b65e8b97ee1b0f2c4e88f9f23e9f3'),
          ('0.1.6', 'iso8601-0.1.6.tar.gz',
           '5ff4c9c8f88d07e1ca1d5c3f84859241fabbabc232a5d893b7771c62201fa968')),
    _pair('iso8601', '.', ('iso8601',), ('iso8601/test_iso8601.py',),
          ('0.1.6', 'iso8601-0.1.6.tar.gz',
           '5ff4c9c8f88d07e1ca1d5c3f84859241fabbabc232a5d893b7771c62201fa968'),
          ('0.1.7', 'iso8601-0.1.7.tar.gz',
           '4d369fa5d8137caf9e68c4c7500e18d5dcbbc67bb9e0b8c7d5e5372e2e69597c')),
    _pair('asttokens', '.', ('asttokens',), ('tests',),
          ('1.1.8', 'asttokens-1.1.8.tar.gz',
           '0fcf7308ca58f401e64718776b58027a2bec28a0ce9e0eaf421f22d73dde96d0'),
          ('1.1.9', 'asttokens-1.1.9.tar.gz',
           '53521faddd46a8650a73fb5d15f1449f71f46ca859d3d072ccc681630c9b6d83')),
    _pair('asttokens', '.', ('asttokens',), ('tests',),
          ('1.1.9', 'asttokens-1.1.9.tar.gz',
           '53521faddd46a8650a73fb5d15f1449f71f46ca859d3d072ccc681630c9b6d83'),
          ('1.1.10', 'asttokens-1.1.10.tar.gz',
           '7432a1b928b4db27939a7798c532327ccfb0b22b2d546e20f16e44806cbd1e4d')),
    _pair('asttokens', '.', ('asttokens',), ('tests',),
          ('1.1.11', 'asttokens-1.1.11.tar.gz',
           '712a2bbffc78b6b752563afdb965268584f9492916645f51315487f22c8d1473'),
          ('1.1.12', 'asttokens-1.1.12.tar.gz',
           'af21ed12c4cdf8cfb85b33486f2bbbbfea2bc65bfef330c8e226b1eab8a0b2e2')),
    _pair('asttokens', '.', ('asttokens',), ('tests',),
          ('1.1.12', 'asttokens-1.1.12.tar.gz',
           'af21ed12c4cdf8cfb85b33486f2bbbbfea2bc65bfef330c8e226b1eab8a0b2e2'),
          ('1.1.13', 'asttokens-1.1.13.tar.gz',
           '55c00658f9e0fa7e031529c719e8bb2cdbad0ad973aaff08faf6bfdaa96ca4ed')),
    _pair('asttokens', '.', ('asttokens',), ('tests',),
          ('1.1.13', 'asttokens-1.1.13.tar.gz',
           '55c00658f9e0fa7e031529c719e8bb2cdbad0ad973aaff08faf6bfdaa96ca4ed'),
          ('1.1.14', 'asttokens-1.1.14.tar.gz',
           'e99fd63a6436f3da85ef3c33e0e314035de7116e5e6f408ac68ea2eb59785419')),
    _pair('asttokens', '.', ('asttokens',), ('tests',),
          ('1.1.14', 'asttokens-1.1.14.tar.gz',
           'e99fd63a6436f3da85ef3c33e0e314035de7116e5e6f408ac68ea2eb59785419'),
          ('1.1.15', 'asttokens-1.1.15.tar.gz',
           'b9a2d9d38b2e42fdb587e00619033b936adb76ef572d10f149d9c0552813d4d3')),
    _pair('asttokens', '.', ('asttokens',), ('tests',),
          ('2.0.4', 'asttokens-2.0.4.tar.gz',
           'a42e57e28f2ac1c85ed9b1f84109401427e5c63c04f61d15b8842b027eec5128'),
          ('2.0.5', 'asttokens-2.0.5.tar.gz',
           '9a54c114f02c7a9480d56550932546a3f1fe71d8a02f1bc7ccd0ee3ee35cf4d5')),
    _pair('decorator', 'src', ('src/decorator.py',), ('src/tests/test.py',),
          ('4.1.1', 'decorator-4.1.1.tar.gz',
           'd48a0a1107a1e72ebd603ae3f9b06e4b9109f7fa92e28152a710adc4d37bf6e9'),
          ('4.1.2', 'decorator-4.1.2.tar.gz',
           '7cb64d38cb8002971710c8899fbdfb859a23a364b7c99dab19d1f719c2ba16b5')),
    _pair('decorator', 'src', ('src/decorator.py',), ('src/tests/test.py',),
          ('4.3.0', 'decorator-4.3.0.tar.gz',
           'c39efa13fbdeb4506c476c9b3babf6a718da943dab7811c206005a4a956c080c'),
          ('4.3.1', 'decorator-4.3.1.tar.gz',
           'caf7abb367a4f4595aff11de0f2ada226136ab538433ba24fb12748c6fc68925')),
    _pair('decorator', 'src', ('src/decorator.py',), ('src/tests/test.py',),
          ('4.3.2', 'decorator-4.3.2.tar.gz',
           '33cd704aea07b4c28b3eb2c97d288a06918275dac0ecebdaf1bc8a48d98adb9e'),
          ('4.4.0', 'decorator-4.4.0.tar.gz',
           '86156361c50488b84a3f148056ea716ca587df2f0de1d34750d35c21312725de')),
    _pair('decorator', 'src', ('src/decorator.py',), ('src/tests/test.py',),
          ('4.4.1', 'decorator-4.4.1.tar.gz',
           '54c38050039232e1db4ad7375cfce6748d7b41c29e95a081c8a6d2c30364a2ce'),
          ('4.4.2', 'decorator-4.4.2.tar.gz',
           'e3a62f0520172440ca0dcc823749319382e377f37f140a0b99ef45fecb84bfe7')),
    _pair('decorator', 'src', ('src/decorator.py',), ('src/tests/test.py',),
          ('5.0.5', 'decorator-5.0.5.tar.gz',
           'acda948ffcfe4bd0c4a57834b74ad968b91925b8201b740ca9d46fb8c5c618ce'),
          ('5.0.6', 'decorator-5.0.6.tar.gz',
           'f2e71efb39412bfd23d878e896a51b07744f2e2250b2e87d158e76828c5ae202')),
    _pair('decorator', 'src', ('src/decorator.py',), ('src/tests/test.py',),
          ('5.0.6', 'decorator-5.0.6.tar.gz',
           'f2e71efb39412bfd23d878e896a51b07744f2e2250b2e87d158e76828c5ae202'),
          ('5.0.7', 'decorator-5.0.7.tar.gz',
           '6f201a6c4dac3d187352661f508b9364ec8091217442c9478f1f83c003a0f060')),
    _pair('decorator', 'src', ('src/decorator.py',), ('src/tests/test.py',),
          ('5.0.8', 'decorator-5.0.8.tar.gz',
           'bff00cfb18698f9a19fa6400451fd7ea894f3845cedd7b8b7b0ce9c53171fefb'),
          ('5.0.9', 'decorator-5.0.9.tar.gz',
           '72ecfba4320a893c53f9706bebb2d55c270c1e51a28789361aa93e4a21319ed5')),
    _pair('decorator', 'src', ('src/decorator.py',), ('src/tests/test.py',),
          ('5.1.0', 'decorator-5.1.0.tar.gz',
           'e59913af105b9860aa2c8d3272d9de5a56a4e608db9a2f167a8480b323d529a7'),
          ('5.1.1', 'decorator-5.1.1.tar.gz',
           '637996211036b6385ef91435e4fae22989472f9d571faba8927ba8253acbc330')),
    _pair('decorator', 'src', ('src/decorator.py',), ('tests/test.py',),
          ('5.2.0', 'decorator-5.2.0.tar.gz',
           '1cf2ab68f8c1c7eae3895d82ab0daab41294cfbe6fbdebf50b44307299980762'),
          ('5.2.1', 'decorator-5.2.1.tar.gz',
           '65f266143752f734b0a7cc83c46f4618af75b8c5911b00ccb61d0ac9b6da0360')),
    _pair('decorator', 'src', ('src/decorator',), ('tests/test.py',),
          ('5.3.0', 'decorator-5.3.0.tar.gz',
           '95fda3122972c847cf0ff7e0ce2829bf25136f2526b627b3da85b60ca5f485c0'),
          ('5.3.1', 'decorator-5.3.1.tar.gz',
           '4cbcdd55a6efadb9dbea26b858f4fb3264567b52d69ca0d25b721b553f60ea82')),
    _pair('mccabe', '.', ('mccabe.py',), ('test_mccabe.py',),
          ('0.3', 'mccabe-0.3.tar.gz',
           '3d8ca9bf65c5014f469180544d1dd5bb5b9df709aad6304f9c2e4370ae0a7b7c'),
          ('0.3.1', 'mccabe-0.3.1.tar.gz',
           '5f7ea6fb3aa9afe146d07fd6d5cedf788747d8b0c29e44732453c2b2db1e3d16')),
    _pair('mccabe', '.', ('mccabe.py',), ('test_mccabe.py',),
          ('0.3.1', 'mccabe-0.3.1.tar.gz',
           '5f7ea6fb3aa9afe146d07fd6d5cedf788747d8b0c29e44732453c2b2db1e3d16'),
          ('0.4.0', 'mccabe-0.4.0.tar.gz',
           '9a2b12ebd876e77c72e41ebf401cc2e7c5b566649d50105ca49822688642207b')),
    _pair('mccabe', '.', ('mccabe.py',), ('test_mccabe.py',),
          ('0.5.3', 'mccabe-0.5.3.tar.gz',
           '16293af41e7242031afd73896fef6458f4cad38201d21e28f344fff50ae1c25e'),
          ('0.6.0', 'mccabe-0.6.0.tar.gz',
           'de9bbfe5b771e4c11b1521f3e338fe265a12296b59302f43a3bbf3e02d4b98b1')),
    _pair('mccabe', '.', ('mccabe.py',), ('test_mccabe.py',),
          ('0.6.1', 'mccabe-0.6.1.tar.gz',
           'dd8d182285a0fe56bace7f45b5e7d1a6ebcbf524e8f3bd87eb0f125271b8831f'),
          ('0.7.0', 'mccabe-0.7.0.tar.gz',
           '348e0240c33b60bbdf4e523192ef919f28cb2c3d7d5c7794f74009290f236325')),
    _pair('more-itertools', '.', ('more_itertools',), ('tests',),
          ('8.9.0', 'more-itertools-8.9.0.tar.gz',
           '8c746e0d09871661520da4f1241ba6b908dc903839733c8203b552cffaf173bd'),
          ('8.10.0', 'more-itertools-8.10.0.tar.gz',
           '1debcabeb1df793814859d64a81ad7cb10504c24349368ccf214c664c474f41f')),
    _pair('pyflakes', '.', ('pyflakes',), ('pyflakes/test',),
          ('2.1.0', 'pyflakes-2.1.0.tar.gz',
           '5e8c00e30c464c99e0b501dc160b13a14af7f27d4dffb529c556e30a159e231d'),
          ('2.1.1', 'pyflakes-2.1.1.tar.gz',
           'd976835886f8c5b31d47970ed689944a0262b5f3afa00a5a7b4dc81e5449f8a2')),
    _pair('pyflakes', '.', ('pyflakes',), ('pyflakes/test',),
          ('2.3.0', 'pyflakes-2.3.0.tar.gz',
           'e59fd8e750e588358f1b8885e5a4751203a0516e0ee6d34811089ac294c8806f'),
          ('2.3.1', 'pyflakes-2.3.1.tar.gz',
           'f5bc8ecabc05bb9d291eb5203d6810b49040f6ff446a756326104746cc00c1db')),
    _pair('pyflakes', '.', ('pyflakes',), ('pyflakes/test',),
          ('3.0.0', 'pyflakes-3.0.0.tar.gz',
           '12da339341ba8b9071e185d4717bef732fdb4f4400b9f4a1d0d6bbc362bf7760'),
          ('3.0.1', 'pyflakes-3.0.1.tar.gz',
           'ec8b276a6b60bd80defed25add7e439881c19e64850afd9b346283d4165fd0fd')),
    _pair('pyflakes', '.', ('pyflakes',), ('pyflakes/test',),
          ('3.1.0', 'pyflakes-3.1.0.tar.gz',
           'a0aae034c444db0071aa077972ba4768d40c830d9539fd45bf4cd3f8f6992efc'),
          ('3.2.0', 'pyflakes-3.2.0.tar.gz',
           '1c61603ff154621fb2a9172037d84dca3500def8c8b630657d1701f026f8af3f')),
    _pair('pyflakes', '.', ('pyflakes',), ('pyflakes/test',),
          ('3.3.0', 'pyflakes-3.3.0.tar.gz',
           '1955be314ebe8e9bdd100d5877fe10f0fd47fb2497e4f365e981a1a87cc8d9d7'),
          ('3.3.1', 'pyflakes-3.3.1.tar.gz',
           '8752eee11d4ef3a4be642d774863047864b47406cba906fabf8dd892cf98d5b3')),
    _pair('pyflakes', '.', ('pyflakes',), ('pyflakes/test',),
          ('4.0.1', 'pyflakes-4.0.1.tar.gz',
           'cb4e721195b96e1792f3dfaefa02fb36a4f6253e899bbe0793f8aef6ed0065ef'),
          ('4.0.2', 'pyflakes-4.0.2.tar.gz',
           'dcf9cfcece3d9dacc66b7dd2fa217c1a1b79e3075bf488909c15e0857203fd24')),
    _pair('xmltodict', '.', ('xmltodict.py',), ('tests',),
          ('0.8.4', 'xmltodict-0.8.4.tar.gz',
           'fdca5247b6be861a95fc534581ad6eff6265472b5292b6d6d0c1d03a892f02b5'),
          ('0.8.5', 'xmltodict-0.8.5.tar.gz',
           '4ba343343316aefa3111cd1e6b889478e6c46cecc6ee7447a996cc9612ad88ba')),
    _pair('xmltodict', '.', ('xmltodict.py',), ('tests',),
          ('0.9.0', 'xmltodict-0.9.0.tar.gz',
           'cc506d660e1d231efa9b766f88cec2ced05394ce94adabddf7b149da7712e719'),
          ('0.9.1', 'xmltodict-0.9.1.tar.gz',
           'ba676bec7a2a2e8be0565c26807db8661f1bfd49b5fd7b2d89731270137f49f3')),
    _pair('xmltodict', '.', ('xmltodict.py',), ('tests',),
          ('0.9.1', 'xmltodict-0.9.1.tar.gz',
           'ba676bec7a2a2e8be0565c26807db8661f1bfd49b5fd7b2d89731270137f49f3'),
          ('0.9.2', 'xmltodict-0.9.2.tar.gz',
           '275d1e68c95cd7e3ee703ddc3ea7278e8281f761680d6bdd637bcd00a5c59901')),
    _pair('xmltodict', '.', ('xmltodict.py',), ('tests',),
          ('0.14.1', 'xmltodict-0.14.1.tar.gz',
           '338c8431e4fc554517651972d62f06958718f6262b04316917008e8fd677a6b0'),
          ('0.14.2', 'xmltodict-0.14.2.tar.gz',
           '201e7c28bb210e374999d1dde6382923ab0ed1a8a5faeece48ab525b7810a553')),

)


def pairs_of(names: tuple[str, ...] | None = None) -> list[ReleasePair]:
    """The pinned pairs of `names` (all when None), in pin order."""
    return [p for p in RELEASE_PAIRS if names is None or p.name in names]
