// The weights of the pilastri evaluation, one per feature of `eval/pilastri.rs` in its order.
// Tuned by `pillarz tune` on 65703 quiet self-play positions (500 epochs): error 0.20810 -> 0.19778.
[
    19, // move
    39, // stack controlled
    73, // stack with a move
    55, // opponent's stack one can land on
    92, // stack with a move the opponent cannot land on
    25, // side to move
]
