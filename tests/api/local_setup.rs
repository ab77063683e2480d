//! The local DynamoDB the tests and `make run` start listens on 127.0.0.1 alone, never on
//! the machine's other interfaces (its own launcher would listen on all of them).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use crate::helpers::endpoint;

/// The addresses that listen on `port`, from the kernel's socket tables.
fn listening_on(port: u16) -> Vec<IpAddr> {
    let mut found = Vec::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let text = std::fs::read_to_string(table).unwrap_or_default();
        for line in text.lines().skip(1) {
            let fields: Vec<&str> = line.split_whitespace().collect();
            // local_address is field 1, the state field 3; 0A is LISTEN.
            let (Some(local), Some("0A")) = (fields.get(1), fields.get(3).copied()) else {
                continue;
            };
            let (address, hex_port) = local.split_once(':').expect("address:port");
            if u16::from_str_radix(hex_port, 16) == Ok(port) {
                found.push(decode(address));
            }
        }
    }
    found
}

/// The kernel prints an address as 32-bit words in host order, each as hex.
fn decode(hex: &str) -> IpAddr {
    let bytes: Vec<u8> = hex
        .as_bytes()
        .chunks(8)
        .flat_map(|word| {
            let word = u32::from_str_radix(std::str::from_utf8(word).unwrap(), 16).unwrap();
            word.to_ne_bytes()
        })
        .collect();
    match bytes.len() {
        4 => IpAddr::V4(Ipv4Addr::from(<[u8; 4]>::try_from(bytes).unwrap())),
        _ => IpAddr::V6(Ipv6Addr::from(<[u8; 16]>::try_from(bytes).unwrap())),
    }
}

fn is_loopback(address: &IpAddr) -> bool {
    match address {
        IpAddr::V4(v4) => v4.is_loopback(),
        IpAddr::V6(v6) => {
            v6.is_loopback() || v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
    }
}

#[test]
fn dynamodb_local_listens_on_the_loopback_address_only() {
    let endpoint = endpoint();
    let port: u16 = endpoint
        .rsplit(':')
        .next()
        .and_then(|p| p.trim_end_matches('/').parse().ok())
        .expect("the endpoint names its port");
    let addresses = listening_on(port);
    assert!(!addresses.is_empty(), "nothing listens on port {port}");
    assert!(
        addresses.iter().all(is_loopback),
        "DynamoDB Local listens on {addresses:?}"
    );
    assert!(is_loopback(&decode("0000000000000000FFFF00000100007F")));
    assert!(!is_loopback(&decode("00000000000000000000000000000000")));
    assert!(!is_loopback(&decode("00000000")));
}
