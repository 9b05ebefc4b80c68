// The weights of the alcazar evaluation, one per feature of `eval/alcazar.rs` in its order.
// Tuned by `pillarz tune` on 139323 quiet self-play positions (500 epochs): error 0.23275 -> 0.21459.
[
    -1,   // step less to the fortress
    -200, // knight walled in
    -76,  // knight with one open side
    -28,  // open side beyond two
    24,   // side to move
    89,   // move to the fortress, walls swung away
    -4,   // open way into one's own fortress
    24,   // square within two steps
    59,   // move from one's own fortress (up to 5)
]
