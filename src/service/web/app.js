// The page: three views chosen by the URL fragment, so that every state has a link and a
// reload resumes it (the fragment never reaches the server, which keeps seat tokens out of
// its logs):
//   (empty)                                   new game form
//   #game=<id>[&seat=p1&token=<t>[&invite=<t>]]  a game, played for `seat` or watched
//   #analyse[&kind=<game>&variants=a,b&position=<p>] or #analyse&from=<id>&ply=<n>
// Everything goes through the public HTTP API (api.js).

import * as api from "./api.js";
import { parse, render } from "./boards.js";
import { Picker } from "./clicks.js";

const $ = (id) => document.getElementById(id);
let catalog = null;
let active = null; // the open view: { stop(), step(where), point(token) }

const TERMINATION = {
  goal: "a pawn reached the third level",
  trap: "trapped",
  fortress: "the fortress was entered",
  no_moves: "no legal move left",
  towers: "three completed towers",
  tiebreak: "decided by the tie-break",
  timeout: "on time",
  resign: "by resignation",
  move_limit: "the service's move limit",
};

function showError(e) {
  const box = $("error");
  box.textContent = e.message || String(e);
  box.hidden = false;
}

function clearError() {
  $("error").hidden = true;
}

const gameInfo = (kind) => catalog.games.find((g) => g.game === kind);
const other = (seat) => (seat === "p1" ? "p2" : "p1");
const seatName = (kind, seat) => {
  const s = gameInfo(kind).seats.find((x) => x.seat === seat);
  return `${s.name} (${seat})`;
};

function formatMs(ms) {
  const s = Math.max(0, ms) / 1000;
  if (s < 10) return s.toFixed(1);
  const m = Math.floor(s / 60);
  return `${m}:${String(Math.floor(s % 60)).padStart(2, "0")}`;
}

export function formatScore(score) {
  if ("win_in" in score) return `win in ${score.win_in}`;
  if ("loss_in" in score) return `loss in ${score.loss_in}`;
  const v = score.value / 100;
  return (v > 0 ? "+" : "") + v.toFixed(2);
}

function variantBoxes(fieldset, kind, chosen) {
  fieldset.querySelectorAll("label").forEach((l) => l.remove());
  const variants = gameInfo(kind).variants;
  fieldset.hidden = variants.length === 0;
  for (const v of variants) {
    const label = document.createElement("label");
    label.title = v.description;
    const box = document.createElement("input");
    box.type = "checkbox";
    box.value = v.name;
    box.checked = chosen.includes(v.name);
    label.append(box, " " + v.name);
    fieldset.append(label);
  }
}

const checkedVariants = (fieldset) =>
  [...fieldset.querySelectorAll("input:checked")].map((b) => b.value);

function fillGames(select, kind) {
  select.replaceChildren(
    ...catalog.games.map((g) => {
      const o = document.createElement("option");
      o.value = g.game;
      o.textContent = g.title;
      return o;
    }),
  );
  select.value = kind;
}

// A board on `container` that sends clicks (and Enter/Space on a focused point) to `onPoint`,
// keeping the keyboard focus on the same point across redraws.
function mountBoard(container, model, opts, onPoint) {
  const focused = document.activeElement?.closest?.("[data-point]")?.getAttribute("data-point");
  const svg = render(model, opts);
  container.replaceChildren(svg);
  container.onclick = (e) => {
    const t = e.target.closest("[data-point]");
    if (t) onPoint(t.getAttribute("data-point"));
  };
  container.onkeydown = (e) => {
    const t = e.target.closest?.("[data-point]");
    if (t && (e.key === "Enter" || e.key === " ")) {
      e.preventDefault();
      onPoint(t.getAttribute("data-point"));
    }
  };
  if (focused) svg.querySelector(`[data-point="${focused}"][tabindex]`)?.focus();
}

function moveList(ol, moves, shown, onPick) {
  ol.replaceChildren(
    ...moves.map((m, i) => {
      const li = document.createElement("li");
      const b = document.createElement("button");
      b.type = "button";
      b.textContent = m;
      b.dataset.ply = i + 1;
      if (i + 1 === shown) b.className = "current";
      b.onclick = () => onPick(i + 1);
      li.append(b);
      return li;
    }),
  );
  ol.querySelector(".current")?.scrollIntoView({ block: "nearest" });
}

// ---------------------------------------------------------------- new game

function openNew() {
  $("view-new").hidden = false;
  const select = $("new-game");
  if (!select.options.length) {
    fillGames(select, "pillarz");
    select.onchange = () => variantBoxes($("new-variants"), select.value, []);
    variantBoxes($("new-variants"), select.value, []);
    $("new-form").onsubmit = (e) => {
      e.preventDefault();
      create().catch(showError);
    };
  }
  return { stop() {}, step() {} };
}

async function create() {
  const kind = $("new-game").value;
  const seat = $("new-seat").value;
  const spec = { game: kind, variants: checkedVariants($("new-variants")) };
  const clockValue = $("new-clock").value;
  if (clockValue) {
    const [initial, increment] = clockValue.split("+").map(Number);
    spec.time_control = { initial_ms: initial, increment_ms: increment };
  }
  const person = document.querySelector('input[name="opponent"]:checked').value === "person";
  if (!person) spec.seats = { [other(seat)]: { engine: { level: Number($("new-level").value) } } };
  const created = await api.createGame(spec);
  const p = new URLSearchParams({ game: created.game.id, seat, token: created.tokens[seat] });
  if (person) p.set("invite", created.tokens[other(seat)]);
  location.hash = p.toString();
}

// ---------------------------------------------------------------- a live game

async function openGame(params) {
  const id = params.get("game");
  const seat = params.get("seat");
  const token = params.get("token");
  const invite = params.get("invite");
  const abort = new AbortController();
  const first = await api.getGame(id);
  const s = {
    view: first,
    kind: first.game,
    positions: [first.start_position],
    shown: null, // the ply on the board, or null to follow the game
    picker: null,
    legalFor: -1, // the ply `picker` was made for
    offset: first.clock ? first.clock.server_now - Date.now() : 0,
    resignArmed: false,
  };
  $("view-game").hidden = false;
  $("game-resign").textContent = "Resign";
  const share = $("game-share");
  share.hidden = !invite;
  if (invite) {
    const link = new URLSearchParams({ game: id, seat: other(seat), token: invite });
    $("game-share-link").value = `${location.origin}${location.pathname}#${link}`;
    $("game-share-copy").onclick = () => navigator.clipboard?.writeText($("game-share-link").value);
  }
  $("game-watch").href = "#" + new URLSearchParams({ game: id });

  const myTurn = () => seat && s.view.status === "ongoing" && s.view.turn === seat;
  const shownPly = () => s.shown ?? s.view.ply;

  function accept(view) {
    if (view.version < s.view.version) return;
    s.view = view;
    s.positions[view.ply] = view.position;
    s.positions[0] = view.start_position;
    schedule();
  }

  function onLine(msg) {
    if (msg.event === "game") {
      const g = msg.game;
      // A whole game (the first line, or after a gap): only its start and its present known.
      s.positions = [g.start_position];
      s.view = g;
      s.positions[g.ply] = g.position;
    } else if (msg.event === "change" && msg.version > s.view.version) {
      const c = msg.change;
      const v = { ...s.view, ...c, moves: c.move ? [...s.view.moves, c.move] : s.view.moves };
      delete v.move;
      delete v.seat;
      delete v.kind;
      delete v.at;
      s.view = v;
      s.positions[c.ply] = c.position;
    }
    schedule();
    return s.view.status === "finished" ? "finished" : undefined;
  }

  let pending = false;
  function schedule() {
    if (pending) return;
    pending = true;
    setTimeout(() => {
      pending = false;
      draw();
      refreshLegal().catch((e) => {
        s.legalFor = -1;
        showError(e);
      });
    }, 0);
  }

  async function refreshLegal() {
    if (!myTurn()) {
      s.picker = null;
      return;
    }
    const ply = s.view.ply;
    if (s.legalFor === ply) return;
    s.legalFor = ply;
    const legal = await api.legalMoves(id);
    if (legal.ply !== s.view.ply) return;
    s.picker = new Picker(s.kind, parse(s.kind, s.view.position), legal.moves);
    draw();
  }

  async function play(move) {
    clearError();
    s.picker = null;
    try {
      accept(await api.submitMove(id, token, move, s.view.ply));
    } catch (e) {
      showError(e);
      s.legalFor = -1;
      schedule();
    }
  }

  function draw() {
    const v = s.view;
    const ply = shownPly();
    const live = ply === v.ply;
    const pos = s.positions[ply];
    const interactive = live && myTurn() && !!s.picker;
    const board = $("game-board");
    if (pos) {
      mountBoard(
        board,
        parse(s.kind, pos),
        {
          interactive,
          targets: interactive ? s.picker.targets() : [],
          selected: interactive ? s.picker.clicks : [],
          last: v.moves[ply - 1],
        },
        (token) => {
          if (!interactive) return;
          const { move } = s.picker.click(token);
          if (move) play(move);
          else draw();
        },
      );
    } else {
      board.textContent = "This position is no longer in the game's log.";
    }
    board.dataset.ply = ply;
    board.dataset.turn = interactive ? "mine" : "";
    board.dataset.status = v.status;
    // Players and clocks.
    $("game-players").replaceChildren(
      ...["p1", "p2"].map((p) => {
        const row = document.createElement("div");
        row.className = `player ${p}` + (v.status === "ongoing" && v.turn === p ? " to-move" : "");
        const who =
          p === seat ? "you" : v.engine_seats && v.engine_seats[p] ? `engine level ${v.engine_seats[p]}` : "a person";
        const name = document.createElement("span");
        name.className = "name";
        name.textContent = `${seatName(s.kind, p)} — ${who}`;
        const clock = document.createElement("span");
        clock.className = "clock";
        clock.id = "clock-" + p;
        row.append(name, clock);
        return row;
      }),
    );
    tick();
    const status = $("game-status");
    if (v.status === "finished") {
      const who = v.result === "draw" ? "Draw" : `${seatName(s.kind, v.result)} wins`;
      status.textContent = `${who} — ${TERMINATION[v.termination] || v.termination}.`;
      status.className = "status over";
    } else {
      status.textContent = `${seatName(s.kind, v.turn)} to move` + (myTurn() ? " — your move" : "");
      status.className = "status";
    }
    status.dataset.result = v.result || "";
    status.dataset.termination = v.termination || "";
    moveList($("game-moves"), v.moves, ply, (p) => {
      s.shown = p === v.ply ? null : p;
      draw();
    });
    $("game-move-form").hidden = !(seat && v.status === "ongoing");
    $("game-resign").hidden = !(seat && v.status === "ongoing");
  }

  function tick() {
    const c = s.view.clock;
    for (const p of ["p1", "p2"]) {
      const node = document.getElementById("clock-" + p);
      if (!node) continue;
      if (!c) {
        node.textContent = "";
        continue;
      }
      let left = c.remaining_ms[p];
      if (c.running === p && s.view.status === "ongoing") left -= Date.now() + s.offset - c.server_now;
      node.textContent = formatMs(left);
      node.classList.toggle("low", left < 10000);
    }
  }
  const ticker = setInterval(tick, 100);

  $("game-move-form").onsubmit = (e) => {
    e.preventDefault();
    const text = $("game-move").value.trim();
    if (!text) return;
    $("game-move").value = "";
    play(text);
  };
  $("game-resign").onclick = async () => {
    if (!s.resignArmed) {
      s.resignArmed = true;
      $("game-resign").textContent = "Really resign?";
      return;
    }
    try {
      accept(await api.resign(id, token));
    } catch (e) {
      showError(e);
    }
  };
  $("game-analyse").onclick = () => {
    location.hash = new URLSearchParams({ analyse: "", from: id, ply: shownPly() }).toString();
  };

  draw();
  api.follow(id, 0, onLine, abort.signal).catch((e) => {
    if (!abort.signal.aborted) showError(e);
  });
  return {
    stop() {
      abort.abort();
      clearInterval(ticker);
    },
    step(where) {
      const n = s.view.ply;
      const now = shownPly();
      const to = { first: 0, back: Math.max(0, now - 1), forward: Math.min(n, now + 1), last: n }[where];
      s.shown = to === n ? null : to;
      draw();
    },
  };
}

// The positions of a stored game, ply by ply, from its events stream replayed from the start.
async function positionsOf(id) {
  const game = await api.getGame(id);
  const positions = [game.start_position];
  const abort = new AbortController();
  await api.follow(
    id,
    0,
    (msg) => {
      if (msg.event === "change" && msg.change.move) positions[msg.change.ply] = msg.change.position;
      if (msg.version >= game.version) {
        abort.abort();
        return "finished";
      }
    },
    abort.signal,
  );
  return { game, positions };
}

// ---------------------------------------------------------------- analysis

// Positions are explored on scratch games: the API has no legal moves for a bare position,
// so the page creates an untimed game from the position (both seats its own) to ask for its
// legal moves and to apply moves. One is created only when a board is clicked or a move is
// typed, and it is reused as long as the line goes on from its position.
async function openAnalysis(params) {
  const s = {
    kind: params.get("kind") || "pillarz",
    variants: (params.get("variants") || "").split(",").filter(Boolean),
    path: [], // [{ position, move }]: the root, then each move and the position after it
    cursor: 0,
    scratch: null, // { id, tokens, position, turn }
    picker: null,
    analysedAt: null,
    analysis: null,
    run: 0,
  };
  $("view-analyse").hidden = false;
  if (params.has("from")) {
    const { game, positions } = await positionsOf(params.get("from"));
    s.kind = game.game;
    s.variants = game.variants;
    s.path = positions.map((position, i) => ({ position, move: i ? game.moves[i - 1] : null }));
    const ply = Number(params.get("ply"));
    s.cursor = Number.isInteger(ply) && ply >= 0 && ply < s.path.length ? ply : s.path.length - 1;
  } else {
    s.path = [{ position: params.get("position") || gameInfo(s.kind).start_position, move: null }];
  }
  fillGames($("an-game"), s.kind);
  variantBoxes($("an-variants"), s.kind, s.variants);
  $("an-game").onchange = () => {
    variantBoxes($("an-variants"), $("an-game").value, []);
    $("an-position").value = gameInfo($("an-game").value).start_position;
  };
  $("an-lines").replaceChildren();
  $("an-summary").textContent = "";

  const here = () => s.path[s.cursor].position;

  async function scratchHere() {
    if (s.scratch && s.scratch.position === here()) return s.scratch;
    const created = await api.createGame({ game: s.kind, variants: s.variants, position: here() });
    s.scratch = {
      id: created.game.id,
      tokens: created.tokens,
      position: created.game.position,
      turn: created.game.turn,
    };
    s.path[s.cursor].position = created.game.position;
    return s.scratch;
  }

  async function pickerHere() {
    if (s.picker) return s.picker;
    const scratch = await scratchHere();
    const legal = await api.legalMoves(scratch.id);
    s.picker = new Picker(s.kind, parse(s.kind, here()), legal.moves);
    return s.picker;
  }

  // Plays `move` at the cursor: the line after the cursor is replaced by it.
  async function play(move) {
    const scratch = await scratchHere();
    const after = await api.submitMove(scratch.id, scratch.tokens[scratch.turn], move);
    scratch.position = after.position;
    scratch.turn = after.turn;
    s.path = s.path.slice(0, s.cursor + 1);
    s.path.push({ position: after.position, move: after.moves[after.moves.length - 1] });
    s.cursor++;
    s.picker = null;
  }

  async function onPoint(token) {
    clearError();
    try {
      const picker = await pickerHere();
      const { move } = picker.click(token);
      if (move) await play(move);
    } catch (e) {
      showError(e);
    }
    draw();
  }

  async function loadLine(line, upto) {
    clearError();
    try {
      s.cursor = s.analysedAt;
      s.picker = null;
      for (const move of line.pv) await play(move);
      s.cursor = s.analysedAt + upto + 1;
      s.picker = null;
    } catch (e) {
      showError(e);
    }
    draw();
  }

  async function analyse() {
    clearError();
    const run = ++s.run;
    const [kind, amount] = $("an-limit").value.split(":");
    const at = s.cursor;
    $("an-summary").textContent = "Thinking…";
    $("an-lines").replaceChildren();
    try {
      const result = await api.analyse({
        game: s.kind,
        variants: s.variants,
        position: here(),
        limits: { [kind]: Number(amount) },
        multipv: Number($("an-multipv").value),
      });
      if (run !== s.run) return;
      s.analysis = result;
      s.analysedAt = at;
      drawLines();
    } catch (e) {
      if (run === s.run) {
        $("an-summary").textContent = "";
        showError(e);
      }
    }
  }

  function drawLines() {
    const a = s.analysis;
    const summary = $("an-summary");
    if (!a.best_move) {
      summary.textContent = "No legal move: the game is over here.";
      return;
    }
    const mover = parse(s.kind, s.path[s.analysedAt].position).side;
    summary.textContent =
      `At ply ${s.analysedAt}, scores for ${seatName(s.kind, mover)} to move: ` +
      `depth ${a.depth}, ${a.nodes.toLocaleString("en")} positions, ${a.time_ms} ms.`;
    $("an-lines").replaceChildren(
      ...a.lines.map((line) => {
        const li = document.createElement("li");
        const score = document.createElement("span");
        score.className = "score" + ("value" in line.score ? "" : " proven");
        score.textContent = formatScore(line.score);
        const playBtn = document.createElement("button");
        playBtn.type = "button";
        playBtn.className = "play-line";
        playBtn.textContent = "▶";
        playBtn.setAttribute("aria-label", `step through the line ${line.pv.join(" ")}`);
        playBtn.onclick = () => loadLine(line, 0);
        const moves = document.createElement("span");
        moves.className = "pv";
        line.pv.forEach((m, i) => {
          const b = document.createElement("button");
          b.type = "button";
          b.textContent = m;
          b.onclick = () => loadLine(line, i);
          moves.append(b);
        });
        li.append(score, playBtn, moves);
        return li;
      }),
    );
  }

  function draw() {
    const pos = here();
    const picker = s.picker;
    let model;
    try {
      model = parse(s.kind, pos);
    } catch (e) {
      showError(new Error(`cannot draw this position: ${e.message}`));
      return;
    }
    const board = $("an-board");
    mountBoard(
      board,
      model,
      {
        interactive: true,
        targets: picker ? picker.targets() : [],
        selected: picker ? picker.clicks : [],
        last: s.path[s.cursor].move,
      },
      onPoint,
    );
    board.dataset.ply = s.cursor;
    board.dataset.position = pos;
    $("an-position").value = pos;
    moveList(
      $("an-path"),
      s.path.slice(1).map((p) => p.move),
      s.cursor,
      (p) => {
        s.cursor = p;
        s.picker = null;
        draw();
      },
    );
    history.replaceState(
      null,
      "",
      "#" +
        new URLSearchParams({
          analyse: "",
          kind: s.kind,
          variants: s.variants.join(","),
          position: pos,
        }),
    );
  }

  $("an-form").onsubmit = (e) => {
    e.preventDefault();
    clearError();
    s.kind = $("an-game").value;
    s.variants = checkedVariants($("an-variants"));
    s.path = [{ position: $("an-position").value.trim(), move: null }];
    s.cursor = 0;
    s.scratch = null;
    s.picker = null;
    s.analysis = null;
    $("an-lines").replaceChildren();
    $("an-summary").textContent = "";
    draw();
  };
  $("an-move-form").onsubmit = async (e) => {
    e.preventDefault();
    const text = $("an-move").value.trim();
    if (!text) return;
    $("an-move").value = "";
    clearError();
    try {
      await play(text);
    } catch (err) {
      showError(err);
    }
    draw();
  };
  $("an-run").onclick = analyse;

  draw();
  return {
    stop() {
      s.run++;
    },
    step(where) {
      const n = s.path.length - 1;
      s.cursor = { first: 0, back: Math.max(0, s.cursor - 1), forward: Math.min(n, s.cursor + 1), last: n }[where];
      s.picker = null;
      draw();
    },
  };
}

// ---------------------------------------------------------------- routing and keys

async function route() {
  clearError();
  active?.stop();
  active = null;
  for (const v of ["view-new", "view-game", "view-analyse"]) $(v).hidden = true;
  const params = new URLSearchParams(location.hash.slice(1));
  try {
    if (params.has("analyse")) active = await openAnalysis(params);
    else if (params.has("game")) active = await openGame(params);
    else active = openNew();
  } catch (e) {
    showError(e);
  }
}

document.addEventListener("click", (e) => {
  const b = e.target.closest("[data-step]");
  if (b) active?.step(b.dataset.step);
});

document.addEventListener("keydown", (e) => {
  if (e.target.closest("input, textarea, select")) return;
  const where = { ArrowLeft: "back", ArrowRight: "forward", Home: "first", End: "last" }[e.key];
  if (where && active) {
    e.preventDefault();
    active.step(where);
  }
});

async function start() {
  try {
    catalog = await api.catalog();
  } catch (e) {
    showError(e);
    return;
  }
  window.addEventListener("hashchange", route);
  await route();
  document.body.dataset.ready = "1";
}

start();
