// The weights of the pyrga evaluation, one per feature of `eval/pyrga.rs` in its order.
// Tuned by `pillarz tune` on 41585 quiet self-play positions (500 epochs): error 0.20868 -> 0.15039.
[
    1240, // completed tower controlled
    751,  // two-piece stack all one's own
    257,  // one-piece stack one's own
    -395, // square in hand
    385,  // triangle in hand
    -67,  // cylinder in hand
    289,  // tower one piece short that the side to move can complete
    259,  // tower one piece short that the opponent can complete
    413,  // two completed towers controlled
    69,   // legal move of the side to move
    -310, // side to move
]
