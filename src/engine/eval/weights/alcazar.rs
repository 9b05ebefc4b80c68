// The weights of the Alcazar evaluation, one per feature of `eval/alcazar.rs` in its order.
[
    45,   // step less to the fortress
    -200, // knight walled in
    -70,  // knight with one open side
    15,   // open side beyond two
    10,   // side to move
    0,    // move to the fortress, walls swung away
    0,    // open way into one's own fortress
    0,    // square within two steps
    0,    // move from one's own fortress (up to 5)
]
