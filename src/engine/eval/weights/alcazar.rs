// The weights of the Alcazar evaluation, one per feature of `eval/alcazar.rs` in its order.
[
    45,   // step less to the fortress
    -200, // knight walled in
    -70,  // knight with one open side
    15,   // open side beyond two
    10,   // side to move
]
