// Moves by clicking: every legal move (from the legal-moves endpoint) is spelled as one or
// more sequences of click tokens — the `data-point` names that `boards.js` puts on squares,
// wall slots, pieces in hand and arrows. The clicks so far keep the moves whose sequence
// starts with them, so only legal moves can be made, and the board marks the tokens that
// can come next. A move is chosen once one move is left and its sequence is complete.

// The click sequences of one canonical move in `game`, at the position `model`.
export function sequences(game, move, model) {
  switch (game) {
    case "pillarz": {
      // Placement `c2+d3` (either square first), turn `b2-c3^d4`, winning step `b2-c3`.
      let m = move.match(/^([a-e][1-5])\+([a-e][1-5])$/);
      if (m) return [[m[1], m[2]], [m[2], m[1]]];
      m = move.match(/^([a-e][1-5])-([a-e][1-5])(?:\^([a-e][1-5]))?$/);
      if (m) return [m[3] ? [m[1], m[2], m[3]] : [m[1], m[2]]];
      break;
    }
    case "pilastri": {
      const m = move.match(/^([a-h][1-8])-([a-h][1-8])$/);
      if (m) return [[m[1], m[2]]];
      break;
    }
    case "pyrga": {
      // Piece, space, arrow; or the space first.
      const m = move.match(/^([STC])([a-d][1-4])([NESW]?)$/);
      if (m) {
        const tail = m[3] ? ["dir:" + m[3]] : [];
        return [["piece:" + m[1], m[2], ...tail], [m[2], "piece:" + m[1], ...tail]];
      }
      break;
    }
    case "alcazar": {
      // Knight step: the target square, or the knight then the target; wall swing: the wall,
      // then the slot it reaches.
      let m = move.match(/^K([a-i][1-9])$/);
      if (m) return [[m[1]], [model.knights[model.side], m[1]]];
      m = move.match(/^([a-i][1-9])([a-i][1-9])$/);
      if (m) return [[m[1], m[2]]];
      break;
    }
  }
  throw new Error(`cannot spell ${game} move ${move} as clicks`);
}

export class Picker {
  constructor(game, model, moves) {
    this.entries = moves.flatMap((move) => sequences(game, move, model).map((seq) => ({ move, seq })));
    this.clicks = [];
  }

  matching(clicks) {
    return this.entries.filter((e) => e.seq.length >= clicks.length && clicks.every((c, i) => e.seq[i] === c));
  }

  // The tokens that may be clicked next.
  targets() {
    return new Set(this.matching(this.clicks).map((e) => e.seq[this.clicks.length]).filter(Boolean));
  }

  // A click: `{move}` when it completes a move, else `{}` (the selection changed or was reset).
  click(token) {
    let next = [...this.clicks, token];
    let found = this.matching(next);
    if (!found.length) {
      // Not a continuation: a fresh start with this token, or (same token again) a reset.
      const again = this.clicks[this.clicks.length - 1] === token;
      next = [token];
      found = again ? [] : this.matching(next);
    }
    if (!found.length) {
      this.clicks = [];
      return {};
    }
    const moves = new Set(found.map((e) => e.move));
    const complete = found.find((e) => e.seq.length === next.length);
    if (complete && moves.size === 1) {
      this.clicks = [];
      return { move: complete.move };
    }
    this.clicks = next;
    return {};
  }

  reset() {
    this.clicks = [];
  }
}
