// The weights of the pillarz evaluation, one per feature of `eval/pillarz.rs` in its order.
// Tuned by `pillarz tune` on 109421 quiet self-play positions (400 epochs): error 0.20270 -> 0.20253.
[
    73,   // pawn on level 1
    144,  // pawn on level 2
    -91,  // pawn on a corner
    -23,  // pawn on an edge beside a corner
    -15,  // pawn in the middle of an edge
    37,   // pawn on an inner diagonal square
    52,   // pawn on an inner square beside the centre
    61,   // pawn in the centre
    -17,  // step from level 0 to 0
    15,   // step from level 0 to 1
    -23,  // step from level 1 to 0
    17,   // step from level 1 to 1
    20,   // step from level 1 to 2
    -27,  // step from level 2 to 0
    16,   // step from level 2 to 1
    86,   // step from level 2 to 2
    6,    // step from level 2 to 3
    -138, // pawn that cannot step
    250,  // pawn threatening to win
    35,   // side to move
    24,   // undefended square to make a threat on
    -13,  // capped neighbour
    -8,   // own pawns side by side
    5,    // own pawns two apart
    8,    // own pawns three or more apart
    0,    // enemy pawn beside
    65,   // level-2 squares within one step
    40,   // threat-making steps of the side to move
    25,   // threat-making steps of the opponent
]
