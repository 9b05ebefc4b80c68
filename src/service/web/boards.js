// Boards drawn as SVG from the position notation of each game's rules (the service's own
// pictures at /v1/board.svg are images; the page needs every square, stack, piece and wall
// slot as an element it can click). Each clickable element carries `data-point`: a square
// or slot name (`c3`, `e8`), or for Pyrga a piece (`piece:T`) or an arrow (`dir:N`) — the
// tokens that `clicks.js` matches against the legal moves.

const NS = "http://www.w3.org/2000/svg";

function el(name, attrs = {}, parent) {
  const node = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (parent) parent.appendChild(node);
  return node;
}

const FILES = "abcdefghi";
const sq = (f, r) => FILES[f] + (r + 1);

// ---- parsing: every game's position notation into a small model ----

export function parse(game, position) {
  const parts = position.trim().split(/\s+/);
  switch (game) {
    case "pillarz": {
      const ranks = parts[0].split("/");
      const cells = {};
      ranks.forEach((rank, i) => {
        const r = ranks.length - 1 - i;
        let f = 0;
        for (const m of rank.matchAll(/(\d)([xo]?)/g)) {
          cells[sq(f, r)] = { level: Number(m[1]), pawn: m[2] === "x" ? "p1" : m[2] === "o" ? "p2" : null };
          f++;
        }
      });
      return { game, size: 5, cells, side: parts[1] === "2" ? "p2" : "p1" };
    }
    case "pilastri": {
      const ranks = parts[0].split("/");
      const cells = {};
      ranks.forEach((rank, i) => {
        const r = ranks.length - 1 - i;
        rank.split(",").forEach((s, f) => {
          cells[sq(f, r)] = s === "-" ? [] : [...s].map((c) => (c === "x" ? "p1" : "p2"));
        });
      });
      return { game, size: ranks.length, cells, side: parts[1] === "2" ? "p2" : "p1" };
    }
    case "pyrga": {
      const ranks = parts[0].split("/");
      const cells = {};
      const hand = { p1: { S: 5, T: 5, C: 5 }, p2: { S: 5, T: 5, C: 5 } };
      ranks.forEach((rank, i) => {
        const r = ranks.length - 1 - i;
        rank.split(",").forEach((s, f) => {
          const cell = {};
          const chars = s === "-" ? [] : [...s];
          for (let k = 0; k < chars.length; k++) {
            const c = chars[k];
            const owner = c === c.toUpperCase() ? "p1" : "p2";
            const shape = c.toUpperCase();
            const piece = { owner };
            if (shape === "T") piece.dir = { "^": "N", ">": "E", v: "S", "<": "W" }[chars[++k]];
            cell[shape] = piece;
            hand[owner][shape]--;
          }
          cells[sq(f, r)] = cell;
        });
      });
      return { game, size: 4, cells, hand, side: parts[1] === "2" ? "p2" : "p1", last: parts[2] };
    }
    case "alcazar": {
      return {
        game,
        size: 9,
        walls: new Set(parts[0].split(",")),
        knights: { p1: parts[1], p2: parts[2] },
        side: parts[3] === "2" ? "p2" : "p1",
        frozen: new Set(parts[4] === "-" ? [] : parts[4].split(",")),
      };
    }
  }
  throw new Error("unknown game " + game);
}

// ---- drawing ----

// `opts`: `targets` (tokens a click may choose next), `selected` (tokens clicked so far),
// `last` (the last move, marked), `interactive` (whether squares take clicks and focus).
export function render(model, opts = {}) {
  const draw = { pillarz: drawPillarz, pilastri: drawPilastri, pyrga: drawPyrga, alcazar: drawAlcazar }[model.game];
  const svg = el("svg", { class: `board board-${model.game}`, role: "grid" });
  const lastPoints = new Set((opts.last || "").match(/[a-i][1-9]/g) || []);
  const ctx = {
    targets: new Set(opts.targets || []),
    selected: new Set(opts.selected || []),
    lastPoints,
    interactive: !!opts.interactive,
  };
  draw(svg, model, ctx);
  return svg;
}

// A clickable, focusable element for one token, marked when it is a target or selected.
function point(node, token, label, ctx, extraClass = "") {
  node.setAttribute("data-point", token);
  node.setAttribute("aria-label", label);
  let cls = `${node.getAttribute("class") || ""} pt ${extraClass}`;
  if (ctx.targets.has(token)) cls += " target";
  if (ctx.selected.has(token)) cls += " selected";
  node.setAttribute("class", cls.replace(/\s+/g, " ").trim());
  if (ctx.interactive && (ctx.targets.has(token) || ctx.selected.has(token))) {
    node.setAttribute("tabindex", "0");
    node.setAttribute("role", "button");
  }
  return node;
}

function labels(svg, n, cell, off, name = (i) => FILES[i], rank = (i) => i + 1) {
  for (let i = 0; i < n; i++) {
    el("text", { x: off + i * cell + cell / 2, y: off + n * cell + 18, class: "coord" }, svg).textContent = name(i);
    el("text", { x: off - 14, y: off + (n - 1 - i) * cell + cell / 2 + 5, class: "coord" }, svg).textContent = rank(i);
  }
}

function squareGrid(svg, model, ctx, cell, off, paint) {
  for (let r = 0; r < model.size; r++) {
    for (let f = 0; f < model.size; f++) {
      const name = sq(f, r);
      const x = off + f * cell;
      const y = off + (model.size - 1 - r) * cell;
      const g = el("g", { transform: `translate(${x},${y})` }, svg);
      el("rect", { width: cell, height: cell, class: `sq ${(f + r) % 2 ? "light" : "dark"}${ctx.lastPoints.has(name) ? " last" : ""}` }, g);
      const label = paint(g, name, cell) || name;
      const hit = el("rect", { width: cell, height: cell, class: "hit" }, g);
      point(hit, name, label, ctx);
    }
  }
}

function drawPillarz(svg, model, ctx) {
  const cell = 100, off = 24, n = model.size;
  svg.setAttribute("viewBox", `0 0 ${off * 2 + n * cell} ${off * 2 + n * cell}`);
  squareGrid(svg, model, ctx, cell, off, (g, name) => {
    const { level, pawn } = model.cells[name];
    for (let l = 1; l <= Math.min(level, 3); l++) {
      const inset = 6 + (l - 1) * 13;
      el("rect", { x: inset, y: inset, width: cell - 2 * inset, height: cell - 2 * inset, rx: 6, class: `level level-${l}` }, g);
    }
    if (level === 4) el("circle", { cx: cell / 2, cy: cell / 2, r: 30, class: "cap" }, g);
    if (pawn) {
      el("circle", { cx: cell / 2, cy: cell / 2, r: 19, class: `pawn ${pawn}` }, g);
    }
    if (level > 0 && level < 4) el("text", { x: 10, y: 22, class: "level-label" }, g).textContent = level;
    return `${name}, level ${level}${pawn ? ", " + pawn + " pawn" : ""}`;
  });
  labels(svg, n, cell, off);
}

function drawPilastri(svg, model, ctx) {
  const cell = 70, off = 24, n = model.size;
  svg.setAttribute("viewBox", `0 0 ${off * 2 + n * cell} ${off * 2 + n * cell}`);
  squareGrid(svg, model, ctx, cell, off, (g, name) => {
    const stack = model.cells[name];
    if (!stack.length) return `${name}, empty`;
    // The stack's pieces as a strip, bottom to top, and its top piece with the height.
    const strip = cell - 16;
    stack.forEach((owner, i) => {
      const h = strip / stack.length;
      el("rect", { x: 5, y: 8 + strip - (i + 1) * h, width: 7, height: Math.max(h - 1, 1), class: `piece ${owner}` }, g);
    });
    const top = stack[stack.length - 1];
    el("circle", { cx: cell / 2 + 4, cy: cell / 2, r: 22, class: `piece ${top}` }, g);
    el("text", { x: cell / 2 + 4, y: cell / 2 + 7, class: `height ${top}` }, g).textContent = stack.length;
    return `${name}, stack of ${stack.length}, ${top} on top`;
  });
  labels(svg, n, cell, off);
}

const ARROW = { N: 0, E: 90, S: 180, W: 270 };

function drawPyrga(svg, model, ctx) {
  const cell = 110, off = 24, n = model.size;
  const tray = 120;
  svg.setAttribute("viewBox", `0 0 ${off * 2 + n * cell} ${off * 2 + n * cell + tray}`);
  squareGrid(svg, model, ctx, cell, off, (g, name) => {
    const c = model.cells[name];
    const parts = [];
    if (c.S) {
      el("rect", { x: 10, y: 10, width: cell - 20, height: cell - 20, rx: 4, class: `piece ${c.S.owner}` }, g);
      parts.push(`${c.S.owner} square`);
    }
    if (c.T) {
      const t = el("g", { transform: `rotate(${ARROW[c.T.dir]} ${cell / 2} ${cell / 2})` }, g);
      el("polygon", { points: `${cell / 2},18 ${cell - 24},${cell - 26} 24,${cell - 26}`, class: `piece ${c.T.owner} tri` }, t);
      parts.push(`${c.T.owner} triangle pointing ${c.T.dir}`);
    }
    if (c.C) {
      el("circle", { cx: cell / 2, cy: cell / 2 + 6, r: 15, class: `piece ${c.C.owner} cyl` }, g);
      parts.push(`${c.C.owner} cylinder`);
    }
    return `${name}${parts.length ? ", " + parts.join(", ") : ", empty"}`;
  });
  labels(svg, n, cell, off);
  // The tray: the side to move's pieces in hand, then the four arrows for a triangle.
  const y0 = off * 2 + n * cell;
  const side = model.side;
  ["S", "T", "C"].forEach((shape, i) => {
    const g = el("g", { transform: `translate(${off + i * 80},${y0})` }, svg);
    el("rect", { width: 72, height: 72, rx: 8, class: "tray" }, g);
    if (shape === "S") el("rect", { x: 16, y: 16, width: 40, height: 40, class: `piece ${side}` }, g);
    if (shape === "T") el("polygon", { points: "36,12 60,56 12,56", class: `piece ${side} tri` }, g);
    if (shape === "C") el("circle", { cx: 36, cy: 36, r: 20, class: `piece ${side} cyl` }, g);
    el("text", { x: 62, y: 68, class: "count" }, g).textContent = model.hand[side][shape];
    const hit = el("rect", { width: 72, height: 72, class: "hit" }, g);
    point(hit, "piece:" + shape, `${side} ${ { S: "square", T: "triangle", C: "cylinder" }[shape] } in hand, ${model.hand[side][shape]} left`, ctx);
  });
  ["N", "E", "S", "W"].forEach((dir, i) => {
    const g = el("g", { transform: `translate(${off + 250 + (i % 2) * 50},${y0 + Math.floor(i / 2) * 40})` }, svg);
    const on = ctx.targets.has("dir:" + dir);
    el("rect", { width: 44, height: 36, rx: 6, class: `tray${on ? "" : " off"}` }, g);
    const a = el("g", { transform: `rotate(${ARROW[dir]} 22 18)` }, g);
    el("polygon", { points: "22,4 34,28 10,28", class: "arrow" }, a);
    const hit = el("rect", { width: 44, height: 36, class: "hit" }, g);
    point(hit, "dir:" + dir, `triangle pointing ${dir}`, ctx);
  });
}

function drawAlcazar(svg, model, ctx) {
  const u = 55, off = 34;
  svg.setAttribute("viewBox", `0 0 ${off * 2 + 8 * u} ${off * 2 + 8 * u}`);
  const X = (i) => off + i * u;
  const Y = (j) => off + (8 - j) * u;
  const name = (i, j) => FILES[i] + (j + 1);
  // Squares (odd lattice points, 0-based), with the fortresses marked.
  for (let j = 1; j < 9; j += 2) {
    for (let i = 1; i < 9; i += 2) {
      const s = name(i, j);
      const g = el("g", { transform: `translate(${X(i) - u},${Y(j) - u})` }, svg);
      const fort = s === "b8" ? " fort p1" : s === "h2" ? " fort p2" : "";
      el("rect", { width: 2 * u, height: 2 * u, class: `sq ${((i + j) / 2) % 2 ? "light" : "dark"}${fort}${ctx.lastPoints.has(s) ? " last" : ""}` }, g);
      let label = s;
      for (const seat of ["p1", "p2"]) {
        if (model.knights[seat] === s) {
          el("circle", { cx: u, cy: u, r: 26, class: `knight ${seat}` }, g);
          el("text", { x: u, y: u + 9, class: "knight-label" }, g).textContent = "K";
          label += `, ${seat} knight`;
        }
      }
      point(el("rect", { x: 12, y: 12, width: 2 * u - 24, height: 2 * u - 24, class: "hit" }, g), s, label, ctx);
    }
  }
  // Wall slots (mixed parity): drawn when a wall stands there, clickable always.
  for (let j = 0; j < 9; j++) {
    for (let i = 0; i < 9; i++) {
      if ((i + j) % 2 === 0) continue;
      const s = name(i, j);
      const vertical = i % 2 === 0;
      const [x1, y1, x2, y2] = vertical ? [X(i), Y(j) - u, X(i), Y(j) + u] : [X(i) - u, Y(j), X(i) + u, Y(j)];
      const wall = model.walls.has(s);
      const cls = `slot${wall ? " wall" : ""}${model.frozen.has(s) ? " frozen" : ""}${ctx.lastPoints.has(s) ? " last" : ""}`;
      el("line", { x1, y1, x2, y2, class: cls }, svg);
      const w = vertical ? 22 : 2 * u - 24;
      const h = vertical ? 2 * u - 24 : 22;
      const hit = el("rect", { x: X(i) - w / 2, y: Y(j) - h / 2, width: w, height: h, rx: 6, class: "hit" }, svg);
      point(hit, s, `${wall ? "wall" : "slot"} ${s}${model.frozen.has(s) ? ", frozen" : ""}`, ctx, "slot-hit");
    }
  }
  for (let j = 0; j < 9; j += 2) {
    for (let i = 0; i < 9; i += 2) el("circle", { cx: X(i), cy: Y(j), r: 6, class: "tower" }, svg);
  }
  // Every lattice file and rank is labelled: walls are named on the odd ones too.
  for (let k = 0; k < 9; k++) {
    el("text", { x: X(k), y: off * 2 + 8 * u - 6, class: `coord${k % 2 ? "" : " minor"}` }, svg).textContent = FILES[k];
    el("text", { x: 10, y: Y(k) + 5, class: `coord${k % 2 ? "" : " minor"}` }, svg).textContent = k + 1;
  }
}
