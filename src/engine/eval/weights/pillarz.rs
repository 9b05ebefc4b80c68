// The weights of the pillarz evaluation, one per feature of `eval/pillarz.rs` in its order.
[
    70,  // pawn on level 1
    220, // pawn on level 2
    0,   // pawn on a corner
    4,   // pawn on an edge beside a corner
    6,   // pawn in the middle of an edge
    10,  // pawn on an inner diagonal square
    12,  // pawn on an inner square beside the centre
    16,  // pawn in the centre
    6,   // step from level 0 to 0
    24,  // step from level 0 to 1
    6,   // step from level 1 to 0
    6,   // step from level 1 to 1
    51,  // step from level 1 to 2
    6,   // step from level 2 to 0
    6,   // step from level 2 to 1
    31,  // step from level 2 to 2
    6,   // step from level 2 to 3
    -80, // pawn that cannot step
    250, // pawn threatening to win
    0,   // side to move
    0,   // undefended square to make a threat on
    0,   // capped neighbour
    0,   // own pawns side by side
    0,   // own pawns two apart
    0,   // own pawns three or more apart
    0,   // enemy pawn beside
    0,   // level-2 squares within one step
    0,   // threat-making steps of the side to move
    0,   // threat-making steps of the opponent
]
