//! `tally serve` answers only requests meant for it: addressed to a loopback name or
//! address with its own port (`Host`), and, from a browser, sent by its own pages
//! (`Origin`, `Sec-Fetch-Site`). It authenticates no one, so a web page elsewhere must not
//! drive it through the visitor's browser: with DNS rebinding, a page's own host name
//! comes to point at 127.0.0.1 and its requests reach the server carrying that name in
//! `Host`; a cross-site `fetch` carries the page's `Origin`; an image, a link or a form's
//! GET carries no `Origin`, but browsers mark every request with `Sec-Fetch-Site`, and
//! some GET routes write (an eligible list closes a draw past its closing time). All are
//! answered with a problem document before anything is done. Behind API Gateway, IAM
//! authentication does this work, and this check does not run.

use std::net::IpAddr;

use axum::extract::{Request, State};
use axum::http::uri::Authority;
use axum::http::{HeaderName, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use tracing::warn;

use super::problem::{Code, Problem};

/// Where a browser says a request comes from, relative to the server: `same-origin`,
/// `same-site`, `cross-site`, or `none` (typed, a bookmark). Programs send none.
const SEC_FETCH_SITE: HeaderName = HeaderName::from_static("sec-fetch-site");

/// Whether `host` (of a URL or a `Host` header) is a loopback name or address: `localhost`,
/// `127.0.0.0/8` or `[::1]`.
pub fn is_loopback_host(host: &str) -> bool {
    host.eq_ignore_ascii_case("localhost")
        || host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<IpAddr>()
            .is_ok_and(|address| address.is_loopback())
}

/// The port the server listens on: the only one a request may name.
#[derive(Clone, Copy, Debug)]
pub struct LoopbackOnly {
    pub port: u16,
}

impl LoopbackOnly {
    /// Whether `authority` (`host[:port]`) names this server on a loopback name or
    /// address: `localhost`, `127.0.0.0/8` or `[::1]`, with its port (none only for 80).
    fn names_this_server(&self, authority: &str) -> bool {
        let Ok(authority) = authority.parse::<Authority>() else {
            return false;
        };
        if authority.as_str().contains('@') || authority.port_u16().unwrap_or(80) != self.port {
            return false;
        }
        is_loopback_host(authority.host())
    }

    /// Whether `origin` is one of this server's own: `http://` and an authority that
    /// addresses it.
    fn is_own_origin(&self, origin: &str) -> bool {
        origin
            .strip_prefix("http://")
            .is_some_and(|authority| self.names_this_server(authority))
    }

    /// Why a request is refused, if it is.
    fn refusal(&self, request: &Request) -> Option<Problem> {
        let header = |name| {
            request
                .headers()
                .get(name)
                .map(|value| value.to_str().unwrap_or(""))
        };
        // An absolute URL in the request line names the host too.
        let named = request.uri().authority().map(Authority::as_str);
        let hosts = [header(header::HOST), named];
        let foreign = if hosts.iter().all(Option::is_none) {
            Some("a request that names no host".to_owned())
        } else {
            hosts
                .iter()
                .flatten()
                .find(|host| !self.names_this_server(host))
                .map(|host| format!("{host:?}"))
        };
        if let Some(foreign) = foreign {
            warn!(
                host = foreign,
                "refused a request not addressed to this server"
            );
            return Some(Problem::new(
                Code::ForeignHost,
                format!(
                    "this server answers requests for 127.0.0.1:{}, localhost:{0} or [::1]:{0}, not {foreign}",
                    self.port
                ),
            ));
        }
        if let Some(origin) = header(header::ORIGIN)
            && !self.is_own_origin(origin)
        {
            warn!(origin, "refused a request from another site's page");
            return Some(Problem::new(
                Code::ForeignOrigin,
                format!("this server answers pages of its own origin, not {origin:?}"),
            ));
        }
        // A page of another port of localhost is `same-site`: another site all the same.
        if let Some(site) = header(SEC_FETCH_SITE)
            && ["cross-site", "same-site"]
                .iter()
                .any(|foreign| site.eq_ignore_ascii_case(foreign))
        {
            warn!(site, "refused a request from another site's page");
            return Some(Problem::new(
                Code::ForeignOrigin,
                format!(
                    "this server answers pages of its own origin, not a request the browser marks {site:?}"
                ),
            ));
        }
        None
    }
}

/// The middleware: a request meant for this server goes on, any other is refused.
pub async fn only_loopback(
    State(guard): State<LoopbackOnly>,
    request: Request,
    next: Next,
) -> Response {
    match guard.refusal(&request) {
        Some(problem) => problem.into_response(),
        None => next.run(request).await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_names_with_the_servers_port_address_it() {
        let guard = LoopbackOnly { port: 3000 };
        for own in [
            "127.0.0.1:3000",
            "localhost:3000",
            "LocalHost:3000",
            "[::1]:3000",
            "127.1.2.3:3000",
        ] {
            assert!(guard.names_this_server(own), "{own}");
            assert!(guard.is_own_origin(&format!("http://{own}")), "{own}");
        }
        for foreign in [
            "127.0.0.1:3001",
            "127.0.0.1",
            "attacker.example:3000",
            "localhost.attacker.example:3000",
            "192.168.1.5:3000",
            "[::ffff:127.0.0.1]:3000",
            "user@127.0.0.1:3000",
            "",
            "127.0.0.1:3000/path",
        ] {
            assert!(!guard.names_this_server(foreign), "{foreign}");
        }
        for origin in [
            "null",
            "https://127.0.0.1:3000",
            "http://attacker.example:3000",
        ] {
            assert!(!guard.is_own_origin(origin), "{origin}");
        }
        // Port 80 may go unnamed, as browsers leave it out.
        let default = LoopbackOnly { port: 80 };
        assert!(
            default.names_this_server("localhost") && default.is_own_origin("http://127.0.0.1")
        );
    }
}
