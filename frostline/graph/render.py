"""Drawings of a graph: Mermaid, Graphviz DOT, and a self-made layered SVG.

Transition kinds are visually distinct everywhere: forward edges solid dark, retry edges dashed
orange, rollback edges dashed blue, termination edges dotted red (labelled with their reason).
The SVG needs no external tool: states are placed in layers by their forward distance from the
initial state, forward edges run downwards, and edges that go back up are drawn as curves.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from html import escape

from frostline.graph.graph import Graph
from frostline.graph.records import Transition, TransitionKind

STYLE = {
    TransitionKind.FORWARD: ("#222222", ""),
    TransitionKind.RETRY: ("#d97706", "8 4"),
    TransitionKind.ROLLBACK: ("#2563eb", "8 4"),
    TransitionKind.TERMINATION: ("#dc2626", "2 4"),
}
DOT_STYLE = {
    TransitionKind.FORWARD: ("#222222", "solid"),
    TransitionKind.RETRY: ("#d97706", "dashed"),
    TransitionKind.ROLLBACK: ("#2563eb", "dashed"),
    TransitionKind.TERMINATION: ("#dc2626", "dotted"),
}


def _label(t: Transition) -> str:
    if t.kind is TransitionKind.TERMINATION:
        return t.reason
    if t.kind is TransitionKind.FORWARD:
        return " & ".join(str(p) for p in t.guard)
    return t.kind.value


def to_mermaid(graph: Graph) -> str:
    lines = ["flowchart TD"]
    for s in graph.states:
        shape = f'(["{s}"])' if s in graph.terminals else f'["{s}"]'
        lines.append(f"  {s}{shape}")
    link_styles = []
    for i, t in enumerate(graph.transitions):
        label = _label(t).replace('"', "'")
        arrow = {"forward": "-->", "retry": "-.->", "rollback": "-.->", "termination": "-.->"}[t.kind.value]
        lines.append(f'  {t.from_} {arrow}|"{label}"| {t.to}' if label else f"  {t.from_} {arrow} {t.to}")
        colour, dash = STYLE[t.kind]
        extra = f",stroke-dasharray:{dash}" if dash else ""
        link_styles.append(f"  linkStyle {i} stroke:{colour},stroke-width:2px{extra}")
    lines += link_styles
    lines.append("  classDef terminal fill:#f3f4f6,stroke:#111,stroke-width:2px")
    lines.append(f"  class {','.join(graph.terminals)} terminal")
    return "\n".join(lines) + "\n"


def to_dot(graph: Graph) -> str:
    lines = [f'digraph "{graph.name}" {{', "  rankdir=TB;", '  node [shape=box, fontname="Helvetica"];']
    for s in graph.states:
        shape = ", shape=doubleoctagon" if s in graph.terminals else ""
        lines.append(f'  "{s}" [label="{s}"{shape}];')
    for t in graph.transitions:
        colour, style = DOT_STYLE[t.kind]
        label = _label(t).replace('"', "'")
        lines.append(f'  "{t.from_}" -> "{t.to}" [color="{colour}", style={style}, '
                     f'fontcolor="{colour}", label="{label}"];')
    lines.append("}")
    return "\n".join(lines) + "\n"


def layers(graph: Graph) -> dict[str, int]:
    """Layer of each state: forward distance from the initial state (others placed after)."""
    depth = {graph.initial: 0}
    queue = deque([graph.initial])
    while queue:
        s = queue.popleft()
        for t in graph.forward(s):
            if t.to not in depth:
                depth[t.to] = depth[s] + 1
                queue.append(t.to)
    deepest = max(depth.values(), default=0)
    for s in graph.states:
        if s not in depth:
            reached = [depth[t.from_] for t in graph.transitions if t.to == s and t.from_ in depth]
            depth[s] = (max(reached) + 1) if reached else deepest + 1
    return depth


_W, _H, _GAP_X, _GAP_Y, _MARGIN = 170, 36, 40, 80, 40


@dataclass(frozen=True)
class _Layout:
    pos: dict[str, tuple[float, float]]  # top-left corner of each state's box
    side: tuple[str, ...]  # the sinks drawn in a column of their own
    width: float
    height: float


def _layout(graph: Graph) -> _Layout:
    depth = layers(graph)
    # A rejecting sink gets a column of its own on the right, so the many termination edges
    # that enter it do not cut through the happy path.
    side = tuple(t for t in graph.rejecting_terminals if any(e.to == t for e in graph.transitions))
    rows: dict[int, list[str]] = {}
    for s in graph.states:
        if s not in side:
            rows.setdefault(depth[s], []).append(s)
    widest = max(len(r) for r in rows.values())
    side_x = _MARGIN + widest * (_W + _GAP_X) + 220
    width = side_x + (_W + _MARGIN if side else 0) + 240
    height = _MARGIN * 2 + (max(rows) + 1) * (_H + _GAP_Y) + 40
    pos: dict[str, tuple[float, float]] = {}
    for d, row in rows.items():
        offset = (widest - len(row)) * (_W + _GAP_X) / 2
        for i, s in enumerate(row):
            pos[s] = (_MARGIN + offset + i * (_W + _GAP_X), _MARGIN + 30 + d * (_H + _GAP_Y))
    for i, s in enumerate(side):
        pos[s] = (side_x, _MARGIN + 30 + (max(rows) / 2 + i) * (_H + _GAP_Y))
    return _Layout(pos, side, width, height)


def _svg_edge(i: int, t: Transition, layout: _Layout, taken: int = 0) -> str:
    w, h = _W, _H
    colour, dash = STYLE[t.kind]
    (x1, y1), (x2, y2) = layout.pos[t.from_], layout.pos[t.to]
    sx, sy = x1 + w / 2, y1 + h
    ex, ey = x2 + w / 2, y2
    dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
    title = escape(f"{t} {_label(t)}".strip())
    if t.to in layout.side:
        path_d = f"M{x1 + w:.1f},{y1 + h / 2:.1f} L{x2:.1f},{y2 + h / 2:.1f}"
    elif y2 > y1:
        path_d = f"M{sx:.1f},{sy:.1f} L{ex:.1f},{ey:.1f}"
    else:  # back or sideways edge: bow out to the right, spread by index
        sx, sy = x1 + w, y1 + h / 2
        ex, ey = x2 + w, y2 + h / 2
        bow = 60 + (i % 7) * 18
        path_d = f"M{sx:.1f},{sy:.1f} C{sx + bow:.1f},{sy:.1f} {ex + bow:.1f},{ey:.1f} {ex:.1f},{ey:.1f}"
    # an edge the run took is drawn heavier and says how often
    width, cls = (3.6, " taken") if taken else (1.6, "")
    if taken:
        title += escape(f" (taken {taken}x)")
    return (f'<path d="{path_d}" fill="none" stroke="{colour}" stroke-width="{width}"{dash_attr} '
            f'marker-end="url(#arrow-{t.kind.value})" class="edge {t.kind.value}{cls}">'
            f"<title>{title}</title></path>")


def _svg_state(graph: Graph, s: str, x: float, y: float, visits: int = 0) -> str:
    terminal = s in graph.terminals
    fill = "#dbeafe" if visits else "#f3f4f6" if terminal else "#ffffff"
    stroke_w = 2.5 if terminal else 1.2
    rx = 18 if terminal else 4
    tools = ", ".join(graph.contracts[s].permitted_tools)
    return (f'<g class="state"><title>{escape(s)}: {escape(tools) or "no tools"}</title>'
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{_W}" height="{_H}" rx="{rx}" fill="{fill}" '
            f'stroke="#111" stroke-width="{stroke_w}"/>'
            f'<text x="{x + _W / 2:.1f}" y="{y + _H / 2 + 5:.1f}" font-size="13" '
            f'text-anchor="middle">{escape(s)}</text>{_badge(x, y, visits)}</g>')


def _badge(x: float, y: float, visits: int) -> str:
    """The visit count of a state the run entered, in its top-right corner."""
    if not visits:
        return ""
    return (f'<g class="visits" data-visits="{visits}"><circle cx="{x + _W - 4:.1f}" '
            f'cy="{y + 4:.1f}" r="11" fill="#1d4ed8"/><text x="{x + _W - 4:.1f}" y="{y + 8:.1f}" '
            f'font-size="11" fill="#fff" text-anchor="middle">{visits}</text></g>')


def _svg_legend(width: float) -> list[str]:
    lx, ly = width - 230, _MARGIN + 10  # the legend sits top right, clear of the side column
    out = [f'<g class="legend"><rect x="{lx - 10}" y="{ly - 20}" width="220" height="110" '
           'fill="#fff" stroke="#999"/>']
    for j, (kind, (colour, dash)) in enumerate(STYLE.items()):
        yy = ly + j * 24
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        out.append(f'<line x1="{lx}" y1="{yy}" x2="{lx + 60}" y2="{yy}" stroke="{colour}" '
                   f'stroke-width="2"{dash_attr}/><text x="{lx + 70}" y="{yy + 4}" font-size="12">'
                   f"{kind.value}</text>")
    return out


def to_svg(graph: Graph, visits: Mapping[str, int] | None = None,
           taken: Mapping[tuple[str, str, str], int] | None = None) -> str:
    """A standalone SVG drawing of `graph`; with `visits` (state -> count) and `taken`
    ((from, to, kind) -> count) the path a run took is drawn over it."""
    visits, taken = visits or {}, taken or {}
    layout = _layout(graph)
    width, height = layout.width, layout.height
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
           f'viewBox="0 0 {width:.0f} {height:.0f}" font-family="Helvetica, Arial, sans-serif">',
           "<defs>"]
    for kind, (colour, _) in STYLE.items():
        out.append(f'<marker id="arrow-{kind.value}" viewBox="0 0 10 10" refX="9" refY="5" '
                   f'markerWidth="11" markerHeight="11" markerUnits="userSpaceOnUse" orient="auto-start-reverse">'
                   f'<path d="M0,0 L10,5 L0,10 z" fill="{colour}"/></marker>')
    out.append("</defs>")
    out.append(f'<text x="{_MARGIN}" y="{_MARGIN}" font-size="18" font-weight="bold">'
               f'phase graph: {escape(graph.name)}</text>')
    out += [_svg_edge(i, t, layout, taken.get((t.from_, t.to, t.kind.value), 0))
            for i, t in enumerate(graph.transitions)]
    out += [_svg_state(graph, s, x, y, visits.get(s, 0)) for s, (x, y) in layout.pos.items()]
    out += _svg_legend(width)
    out.append("</g></svg>")
    return "\n".join(out) + "\n"


FORMATS = {"mermaid": to_mermaid, "dot": to_dot, "svg": to_svg}
