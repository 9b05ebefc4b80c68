"""Plays the service through a client generated from openapi/openapi.json by
openapi-python-client, as an integrator would: a full game of each of the four games (every
move the first legal one, sent with the seat's token through the generated AuthenticatedClient),
a resignation, clocks, boards, the events stream and analyses. Run by tests/contract.rs:

    python3 tests/python/play_all.py <base URL> <directory holding the pillarz_client package>
"""

import json
import sys

BASE, CLIENT_DIR = sys.argv[1], sys.argv[2]
sys.path.insert(0, CLIENT_DIR)

from pillarz_client import AuthenticatedClient, Client  # noqa: E402
from pillarz_client.api.analysis import analyse_game, analyse_position  # noqa: E402
from pillarz_client.api.boards import game_board  # noqa: E402
from pillarz_client.api.games import (  # noqa: E402
    catalog,
    clock,
    create,
    get,
    legal,
    resign,
    submit,
)
from pillarz_client.models import (  # noqa: E402
    AnalysisRequest,
    AnalysisView,
    ClockView,
    CreatedGame,
    CreateGame,
    DepthLimit,
    GameAnalysisRequest,
    GameKind,
    GameView,
    LegalMoves,
    MovetimeLimit,
    Problem,
    Seat,
    Status,
    SubmitMove,
    TimeControl,
)

# Most plies a game may take here; the service ends any game by `move_limit` at its
# `--max-plies`, which the test sets below this.
PLY_BOUND = 1000


def expect(value, kind, what):
    """The answer, if it is of the documented type; else fail with what came instead."""
    if not isinstance(value, kind):
        raise AssertionError(f"{what}: expected {kind.__name__}, got {value!r}")
    return value


def seat_clients(created: CreatedGame) -> dict:
    """One AuthenticatedClient per seat, holding that seat's token."""
    tokens = created.tokens.additional_properties
    assert set(tokens) == {"p1", "p2"}, tokens
    return {
        Seat(seat): AuthenticatedClient(base_url=BASE, token=token, raise_on_unexpected_status=True)
        for seat, token in tokens.items()
    }


def new_game(reader, body: CreateGame):
    created = expect(create.sync(client=reader, body=body), CreatedGame, "create")
    assert created.game.status == Status.ONGOING, created.game
    return created, seat_clients(created)


def play_out(game_id: str, seats: dict) -> GameView:
    """Plays the first legal move for whoever is to move until the game is over."""
    view = None
    for _ in range(PLY_BOUND + 1):
        # Anyone may read; the seat to move's client does.
        moves = expect(legal.sync(game_id, client=seats[Seat.P1]), LegalMoves, "legal-moves")
        if not moves.moves:
            break
        view = expect(
            submit.sync(
                game_id,
                client=seats[moves.turn],
                body=SubmitMove(move=moves.moves[0], expected_ply=moves.ply),
            ),
            GameView,
            f"move {moves.moves[0]}",
        )
        assert view.ply == moves.ply + 1, (view.ply, moves.ply)
        assert view.moves[-1] == moves.moves[0], view.moves
    else:
        raise AssertionError(f"game {game_id} not over after {PLY_BOUND} plies")
    final = expect(get.sync(game_id, client=seats[Seat.P2]), GameView, "get")
    assert final.status == Status.FINISHED, final
    assert final.result is not None and final.termination is not None, final
    if view is not None:
        assert final.moves == view.moves
    return final


def main() -> None:
    # Reads need no token; the generated functions are typed for AuthenticatedClient (every
    # /v1/ operation lists the optional `api_key` scheme), and a plain Client works as well.
    anyone = Client(base_url=BASE, raise_on_unexpected_status=True)
    games = catalog.sync(client=anyone).games
    assert sorted(g.game for g in games) == sorted(GameKind), [g.game for g in games]

    summary = {}
    for entry in games:
        created, seats = new_game(anyone, CreateGame(game=entry.game))
        game_id = created.game.id
        assert created.game.position == entry.start_position
        # An untimed game has no clock: `null`.
        assert clock.sync(game_id, client=seats[Seat.P1]) is None

        # A move by the seat not to move, and a move that is not legal, are refused as
        # documented, with problem details.
        moves = legal.sync(game_id, client=seats[Seat.P1])
        wrong = expect(
            submit.sync(game_id, client=seats[Seat.P2], body=SubmitMove(move=moves.moves[0])),
            Problem,
            "a move out of turn",
        )
        assert (wrong.status, wrong.code) == (409, "not_your_turn"), wrong
        nonsense = expect(
            submit.sync(game_id, client=seats[Seat.P1], body=SubmitMove(move="zz99")),
            Problem,
            "a move in no notation",
        )
        assert nonsense.status == 422 and nonsense.code in ("bad_notation", "illegal_move"), nonsense

        final = play_out(game_id, seats)
        summary[entry.game.value] = {
            "plies": final.ply,
            "result": final.result.value,
            "termination": final.termination.value,
        }

        # The board of the finished game, and of its start.
        board = game_board.sync(game_id, client=seats[Seat.P1])
        assert b"<svg" in board, board[:100]
        first = game_board.sync(game_id, client=seats[Seat.P1], ply=0)
        assert b"<svg" in first and first != board

        # The whole game again from the events stream, as NDJSON (the generated client has no
        # stream reader: its httpx client reads the lines).
        with seats[Seat.P1].get_httpx_client().stream(
            "GET",
            f"/v1/games/{game_id}/events",
            headers={"Accept": "application/x-ndjson", "Last-Event-ID": "0"},
        ) as stream:
            lines = [json.loads(line) for line in stream.iter_lines() if line]
        assert lines[0]["event"] == "game", lines[0]
        changes = [line["change"] for line in lines if line["event"] == "change"]
        assert [c["move"] for c in changes] == final.moves, (changes[:3], final.moves[:3])
        assert changes[-1]["status"] == "finished", changes[-1]

        # An analysis of the finished game: no move is left to suggest (unless the service's
        # ply cap ended it).
        done = expect(
            analyse_game.sync(
                game_id, client=seats[Seat.P1], body=GameAnalysisRequest(limits=DepthLimit(depth=2))
            ),
            AnalysisView,
            "analysis of a finished game",
        )
        assert done.best_move is None or final.termination.value == "move_limit", done

    # A timed game with a resignation, and analyses of a live position and game.
    created, seats = new_game(
        anyone,
        CreateGame(game=GameKind.PILLARZ, time_control=TimeControl(initial_ms=300_000, increment_ms=2_000)),
    )
    game_id = created.game.id
    timed = expect(clock.sync(game_id, client=seats[Seat.P1]), ClockView, "clock")
    assert timed.running == Seat.P1 and timed.initial_ms == 300_000, timed
    moves = legal.sync(game_id, client=seats[Seat.P1]).moves
    analysis = expect(
        analyse_position.sync(
            client=anyone,
            body=AnalysisRequest(
                game=GameKind.PILLARZ,
                position=created.game.position,
                limits=MovetimeLimit(movetime_ms=100),
                multipv=2,
            ),
        ),
        AnalysisView,
        "analysis of a position",
    )
    assert analysis.best_move in moves, (analysis.best_move, moves[:5])
    assert len(analysis.lines) == 2 and analysis.pv[0] == analysis.best_move, analysis
    of_game = expect(
        analyse_game.sync(game_id, client=seats[Seat.P1], body=GameAnalysisRequest(limits=DepthLimit(depth=3))),
        AnalysisView,
        "analysis of a game",
    )
    assert of_game.best_move in moves and of_game.depth >= 1, of_game
    resigned = expect(resign.sync(game_id, client=seats[Seat.P2]), GameView, "resign")
    assert resigned.status == Status.FINISHED and resigned.result.value == "p1", resigned
    assert resigned.termination.value == "resign", resigned
    again = expect(resign.sync(game_id, client=seats[Seat.P1]), Problem, "resign a finished game")
    assert (again.status, again.code) == (409, "game_over"), again
    # A token of no seat of this game.
    stranger = AuthenticatedClient(base_url=BASE, token="0" * 64)
    refused = expect(resign.sync(game_id, client=stranger), Problem, "resign with a stranger's token")
    assert refused.status == 403, refused

    summary["analysis"] = {"best_move": analysis.best_move, "score": analysis.score.to_dict()}
    print(json.dumps(summary, sort_keys=True))


if __name__ == "__main__":
    main()
