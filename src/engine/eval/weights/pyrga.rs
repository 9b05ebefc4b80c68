// The weights of the pyrga evaluation, one per feature of `eval/pyrga.rs` in its order.
// Tuned by `pillarz tune` on 62117 quiet self-play positions (500 epochs): error 0.16978 -> 0.14945.
[
    1633, // completed tower controlled
    316,  // two-piece stack all one's own
    76,   // one-piece stack one's own
    -354, // square in hand
    243,  // triangle in hand
    111,  // cylinder in hand
    -146, // tower one piece short that the side to move can complete
    447,  // tower one piece short that the opponent can complete
    489,  // two completed towers controlled
    80,   // legal move of the side to move
    -421, // side to move
    460,  // contested tower one piece short that the side to move can complete
    -188, // contested tower one piece short that the opponent can complete
]
