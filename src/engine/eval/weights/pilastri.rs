// The weights of the Pilastri evaluation, one per feature of `eval/pilastri.rs` in its order.
[
    12, // move
    4,  // stack controlled
]
