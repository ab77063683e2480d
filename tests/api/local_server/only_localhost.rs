//! The local server serves localhost only: a request addressed to another host name (DNS
//! rebinding), sent by another site's page (`Origin`, or `Sec-Fetch-Site` where a browser
//! sends no `Origin`), or carrying a body not announced as JSON (what a page may send
//! without the browser asking first) is refused with a problem, and nothing is done.

use tokio::net::TcpStream;

use tally_testkit::http::exchange;

use super::{LONG, serve};

/// Sends `request` on a connection of its own; returns the status and the problem's code.
async fn answer(address: std::net::SocketAddr, request: String) -> (u16, String) {
    let mut stream = TcpStream::connect(address).await.unwrap();
    let (status, head, body) = exchange(&mut stream, &request).await;
    if status >= 400 {
        assert!(
            head.contains("content-type: application/problem+json"),
            "{head}"
        );
    }
    (status, body["code"].as_str().unwrap_or("").to_owned())
}

#[tokio::test]
async fn a_request_for_another_host_is_421_and_only_loopback_names_with_the_port_are_served() {
    let address = serve(LONG, LONG, LONG).await;
    let port = address.port();
    let get =
        |host: &str| format!("GET /nowhere HTTP/1.1\r\nhost: {host}\r\nconnection: close\r\n\r\n");
    for foreign in [
        // A page whose name now points at 127.0.0.1 (DNS rebinding).
        format!("attacker.example:{port}"),
        format!("127.0.0.1:{}", port.wrapping_add(1)),
        "127.0.0.1".to_owned(),
        format!("192.168.1.5:{port}"),
    ] {
        let (status, code) = answer(address, get(&foreign)).await;
        assert_eq!((status, code.as_str()), (421, "foreign_host"), "{foreign}");
    }
    // The name in an absolute request line counts as much as the header.
    let absolute = format!(
        "GET http://attacker.example:{port}/nowhere HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\nconnection: close\r\n\r\n"
    );
    assert_eq!(
        answer(address, absolute).await,
        (421, "foreign_host".into())
    );
    let without = "GET /nowhere HTTP/1.1\r\nconnection: close\r\n\r\n".to_owned();
    assert_eq!(answer(address, without).await.1, "foreign_host");
    // Served: the router answers for itself.
    for own in [
        format!("127.0.0.1:{port}"),
        format!("localhost:{port}"),
        format!("[::1]:{port}"),
    ] {
        let (status, code) = answer(address, get(&own)).await;
        assert_eq!((status, code.as_str()), (404, "route_not_found"), "{own}");
    }
}

#[tokio::test]
async fn a_request_from_another_sites_page_is_403_and_the_servers_own_pages_are_served() {
    let address = serve(LONG, LONG, LONG).await;
    let port = address.port();
    let from = |origin: &str| {
        format!(
            "GET /nowhere HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\norigin: {origin}\r\nconnection: close\r\n\r\n"
        )
    };
    for foreign in [
        "http://attacker.example".to_owned(),
        format!("http://attacker.example:{port}"),
        format!("https://127.0.0.1:{port}"),
        format!("http://127.0.0.1:{}", port.wrapping_add(1)),
        "null".to_owned(),
    ] {
        let (status, code) = answer(address, from(&foreign)).await;
        assert_eq!(
            (status, code.as_str()),
            (403, "foreign_origin"),
            "{foreign}"
        );
    }
    for own in [
        format!("http://127.0.0.1:{port}"),
        format!("http://localhost:{port}"),
    ] {
        let (status, code) = answer(address, from(&own)).await;
        assert_eq!((status, code.as_str()), (404, "route_not_found"), "{own}");
    }
}

/// An `<img>`, a link or a form's GET on another site's page carries no `Origin`, and some
/// GET routes write: the browser's `Sec-Fetch-Site` tells it from the server's own pages,
/// an address typed or a program (which sends none).
#[tokio::test]
async fn a_request_the_browser_marks_as_from_another_site_is_403_without_an_origin() {
    let address = serve(LONG, LONG, LONG).await;
    let port = address.port();
    let from = |path: &str, site: &str| {
        format!(
            "GET {path} HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\nsec-fetch-site: {site}\r\nconnection: close\r\n\r\n"
        )
    };
    // A route that writes on GET past a draw's closing time; the store is never reached.
    for foreign in ["cross-site", "same-site", "Cross-Site"] {
        let (status, code) = answer(address, from("/draws/d/eligible", foreign)).await;
        assert_eq!(
            (status, code.as_str()),
            (403, "foreign_origin"),
            "{foreign}"
        );
    }
    for own in ["same-origin", "none"] {
        let (status, code) = answer(address, from("/nowhere", own)).await;
        assert_eq!((status, code.as_str()), (404, "route_not_found"), "{own}");
    }
}

#[tokio::test]
async fn a_body_not_announced_as_json_is_415_before_anything_is_done() {
    // The store is never reached: a draw created would need it.
    let address = serve(LONG, LONG, LONG).await;
    let port = address.port();
    let body = r#"{"total_tickets": 100}"#;
    let post = |content_type: &str| {
        format!(
            "POST /draws HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\n{content_type}content-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        )
    };
    // What a cross-site `fetch` may send without a preflight: no content type (a `Blob`
    // body without a type), or `text/plain`.
    for content_type in ["", "content-type: text/plain;charset=UTF-8\r\n"] {
        let (status, code) = answer(address, post(content_type)).await;
        assert_eq!(
            (status, code.as_str()),
            (415, "unsupported_media_type"),
            "{content_type:?}"
        );
    }
}
