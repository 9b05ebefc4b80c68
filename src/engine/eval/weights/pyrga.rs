// The weights of the Pyrga evaluation, one per feature of `eval/pyrga.rs` in its order.
[
    1000, // completed tower controlled
    400,  // two-piece stack all one's own
    40,   // one-piece stack one's own
]
