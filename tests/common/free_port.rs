//! A TCP port on 127.0.0.1 that nothing listens on now, for a server a test starts of its own
//! (redis-server, `pillarz serve`), so that tests never share one.

use std::net::TcpListener;

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}
