//! What every request passes before it reaches a route, and what every answer gets on its way
//! out ([`guard`], a middleware):
//!
//! 1. Its `Host` names the address served ([`Site`]): a page of another site whose own DNS name
//!    points at this machine (DNS rebinding) is refused (421).
//! 2. A request to the API, or one that is not a `GET`, from another site is refused (403): an
//!    `Origin` that is not the server's own, a `Sec-Fetch-Site` other than `same-origin` or
//!    `none`.
//! 3. A `POST` says what it sends: `application/json`, or `application/octet-stream` for a record
//!    (415 otherwise). The types that an HTML form or a "simple" cross-site request can send
//!    (`text/plain`, forms) are refused, so another site's page cannot send one without the
//!    browser asking the server first, which it refuses.
//! 4. The body is read whole within [`Limits::body_timeout`] (408) and [`MAX_BODY_BYTES`] (413).
//! 5. The browser's id, the `zertz_client` cookie (HttpOnly, SameSite=Strict), is read into a
//!    [`Client`]; a browser without one is given one.
//! 6. Every error answer is JSON, `{"error": "..."}`, axum's own (405, 404, 400 of a bad path)
//!    included; every answer forbids other sites to frame the page and browsers to guess types.

use std::net::IpAddr;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http_body_util::{BodyExt, LengthLimitError, Limited};
use serde::Serialize;

use crate::settings::{Limits, MAX_BODY_BYTES};
use crate::token::{is_token, new_token};

/// The cookie that holds a browser's id.
pub const CLIENT_COOKIE: &str = "zertz_client";

/// The longest error text of axum's own answers kept in the JSON message.
const MAX_MESSAGE_BYTES: usize = 1024;

/// An error answer: a status and a message, written as `{"error": message}`.
#[derive(Debug)]
pub struct ApiError {
    /// The status.
    pub status: StatusCode,
    /// What went wrong, for a person.
    pub message: String,
}

impl ApiError {
    /// An error with `status`.
    pub fn new(status: StatusCode, message: impl Into<String>) -> ApiError {
        ApiError { status, message: message.into() }
    }

    /// A 400 answer.
    pub fn bad(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, message)
    }

    /// A 503 answer: the server is at one of its limits; the request may be tried again later.
    pub fn busy(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::SERVICE_UNAVAILABLE, message)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        #[derive(Serialize)]
        struct Body {
            error: String,
        }
        (self.status, axum::Json(Body { error: self.message })).into_response()
    }
}

/// The browser a request comes from: its id (the `zertz_client` cookie), or none for a client
/// without cookies (a script), all of which share one quota.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Client(pub Option<String>);

/// How the address served was named, which decides the `Host` names that reach it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Reach {
    /// A loopback address or `localhost`: `localhost` and the loopback addresses.
    Loopback,
    /// Every interface (`0.0.0.0`, `::`): `localhost` and any address, never another name.
    Everywhere,
    /// A name or an address of its own: that one only.
    Named,
}

/// The address the server is reached at: what the `Host` header of a request may name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Site {
    host: String,
    port: u16,
    reach: Reach,
}

impl Site {
    /// The site of a server listening on `host` (as given to `zertz serve --host`) and `port`
    /// (the port it listens on, not 0).
    ///
    /// A request's `Host` must name `port` (or none for port 80) and `host`; or, where `host`
    /// is a loopback address or `localhost`, `localhost` or a loopback address; or, where
    /// `host` is every interface (`0.0.0.0`, `::`), `localhost` or any address (a name there
    /// could be an attacker's, pointed at this machine).
    pub fn new(host: &str, port: u16) -> Site {
        let host = normalize(host);
        let reach = match host.parse::<IpAddr>() {
            Ok(ip) if ip.is_loopback() => Reach::Loopback,
            Ok(ip) if ip.is_unspecified() => Reach::Everywhere,
            Ok(_) => Reach::Named,
            Err(_) if host == "localhost" => Reach::Loopback,
            Err(_) => Reach::Named,
        };
        Site { host, port, reach }
    }

    /// Whether a `Host` header of `value` names this site.
    pub fn allows(&self, value: &str) -> bool {
        let Some((name, port)) = split_host(value) else { return false };
        if port != self.port {
            return false;
        }
        let name = normalize(name);
        if name == self.host {
            return true;
        }
        let ip = name.parse::<IpAddr>();
        match self.reach {
            Reach::Loopback => name == "localhost" || ip.is_ok_and(|ip| ip.is_loopback()),
            Reach::Everywhere => name == "localhost" || ip.is_ok(),
            Reach::Named => false,
        }
    }

    /// The site as a person would write it, for messages.
    fn describe(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }
}

/// A host name or address without brackets or a final dot, in lower case.
fn normalize(host: &str) -> String {
    let host = host.trim();
    let host = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host);
    host.trim_end_matches('.').to_ascii_lowercase()
}

/// The name and port of a `Host` header (`name`, `name:port`, `[v6]`, `[v6]:port`; no port: 80).
fn split_host(value: &str) -> Option<(&str, u16)> {
    let (name, port) = if let Some(rest) = value.strip_prefix('[') {
        let (inside, after) = rest.split_once(']')?;
        match after {
            "" => (inside, None),
            _ => (inside, Some(after.strip_prefix(':')?)),
        }
    } else {
        match value.split_once(':') {
            Some((name, port)) => (name, Some(port)),
            None => (value, None),
        }
    };
    let port = match port {
        None => 80,
        Some(p) if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) => p.parse().ok()?,
        Some(_) => return None,
    };
    (!name.is_empty()).then_some((name, port))
}

/// What the guard needs: the site served and the limits.
#[derive(Clone, Debug)]
pub struct Guard {
    /// The site served.
    pub site: Site,
    /// The limits (the body timeout).
    pub limits: Limits,
}

/// The middleware: see the module description.
pub async fn guard(State(guard): State<Arc<Guard>>, request: Request, next: Next) -> Response {
    let client = client_of(request.headers());
    let mut response = match admit(&guard, request, client.clone()).await {
        Ok(request) => json_errors(next.run(request).await).await,
        Err(e) => e.into_response(),
    };
    let headers = response.headers_mut();
    for (name, value) in [
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::X_FRAME_OPTIONS, "DENY"),
        (header::CONTENT_SECURITY_POLICY, "frame-ancestors 'none'"),
        (header::REFERRER_POLICY, "no-referrer"),
    ] {
        headers.insert(name, HeaderValue::from_static(value));
    }
    if client.0.is_none() {
        // A browser without an id gets one (a script without cookies goes on without).
        if let Ok(token) = new_token() {
            let cookie = format!("{CLIENT_COOKIE}={token}; Path=/; HttpOnly; SameSite=Strict");
            if let Ok(value) = HeaderValue::from_str(&cookie) {
                headers.append(header::SET_COOKIE, value);
            }
        }
    }
    response
}

/// Steps 1 to 5 of the module description: the request with its body read and its [`Client`],
/// or the answer that refuses it.
async fn admit(guard: &Guard, request: Request, client: Client) -> Result<Request, ApiError> {
    let headers = request.headers();
    let mut hosts = headers.get_all(header::HOST).iter();
    let host = match (hosts.next(), hosts.next()) {
        (Some(h), None) => h.to_str().unwrap_or(""),
        // None, or several: which one would the browser have meant?
        _ => "",
    };
    if !guard.site.allows(host) {
        return Err(ApiError::new(
            StatusCode::MISDIRECTED_REQUEST,
            format!("this server answers for {}, not for host {host:?}", guard.site.describe()),
        ));
    }
    let method = request.method().clone();
    let path = request.uri().path().to_string();
    if path.starts_with("/api/") || !matches!(method, Method::GET | Method::HEAD) {
        same_origin(headers, host)?;
    }
    if method == Method::POST {
        let want =
            if path == "/api/record" { "application/octet-stream" } else { "application/json" };
        let given = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
        let essence = given.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
        if essence != want {
            return Err(ApiError::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                format!("send this request with Content-Type: {want}, not {given:?}"),
            ));
        }
    }
    let (mut parts, body) = request.into_parts();
    let read = Limited::new(body, MAX_BODY_BYTES).collect();
    let bytes = match tokio::time::timeout(guard.limits.body_timeout, read).await {
        Err(_) => {
            return Err(ApiError::new(
                StatusCode::REQUEST_TIMEOUT,
                format!(
                    "the request body did not arrive within {:.1} s",
                    guard.limits.body_timeout.as_secs_f64()
                ),
            ));
        }
        Ok(Err(e)) if e.is::<LengthLimitError>() => {
            return Err(ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("the request body is larger than {MAX_BODY_BYTES} bytes"),
            ));
        }
        Ok(Err(e)) => return Err(ApiError::bad(format!("cannot read the request body: {e}"))),
        Ok(Ok(collected)) => collected.to_bytes(),
    };
    parts.extensions.insert(client);
    Ok(Request::from_parts(parts, Body::from(bytes)))
}

/// Refuses a request that a browser sent from another site's page: an `Origin` other than the
/// site the request names (`http://HOST`), or a `Sec-Fetch-Site` other than `same-origin` or
/// `none` (typed into the address bar).
fn same_origin(headers: &HeaderMap, host: &str) -> Result<(), ApiError> {
    let own = format!("http://{host}");
    for origin in headers.get_all(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or("");
        if !origin.eq_ignore_ascii_case(&own) {
            return Err(ApiError::new(
                StatusCode::FORBIDDEN,
                format!("requests from other sites are refused (origin {origin:?}, not {own:?})"),
            ));
        }
    }
    for site in headers.get_all("sec-fetch-site") {
        let site = site.to_str().unwrap_or("");
        if !matches!(site, "same-origin" | "none") {
            return Err(ApiError::new(
                StatusCode::FORBIDDEN,
                format!("requests from other sites are refused (Sec-Fetch-Site {site:?})"),
            ));
        }
    }
    Ok(())
}

/// The browser of a request: its `zertz_client` cookie when it has the shape of an id.
fn client_of(headers: &HeaderMap) -> Client {
    let id = headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == CLIENT_COOKIE)
        .map(|(_, value)| value.trim())
        .filter(|value| is_token(value));
    Client(id.map(str::to_string))
}

/// An error answer that is not JSON (axum's own: 405, 404 of a path it cannot read, 400, 413)
/// as `{"error": "..."}`, its text (or the status's reason) the message.
async fn json_errors(response: Response) -> Response {
    let status = response.status();
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if !(status.is_client_error() || status.is_server_error()) || is_json {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let text = match Limited::new(body, MAX_MESSAGE_BYTES).collect().await {
        Ok(c) => String::from_utf8_lossy(&c.to_bytes()).trim().to_string(),
        Err(_) => String::new(),
    };
    let message = if text.is_empty() {
        status.canonical_reason().unwrap_or("error").to_lowercase()
    } else {
        text
    };
    parts.headers.remove(header::CONTENT_TYPE);
    parts.headers.remove(header::CONTENT_LENGTH);
    let json = ApiError::new(status, message).into_response();
    let (json_parts, json_body) = json.into_parts();
    parts.headers.extend(json_parts.headers);
    Response::from_parts(parts, json_body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_are_split_into_names_and_ports() {
        assert_eq!(split_host("127.0.0.1:8000"), Some(("127.0.0.1", 8000)));
        assert_eq!(split_host("localhost"), Some(("localhost", 80)));
        assert_eq!(split_host("[::1]:8000"), Some(("::1", 8000)));
        assert_eq!(split_host("[::1]"), Some(("::1", 80)));
        for bad in ["", ":8000", "a:b", "a:", "[::1", "[::1]8000", "::1:8000", "a:99999"] {
            assert_eq!(split_host(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn a_loopback_server_answers_loopback_names_on_its_port() {
        let site = Site::new("127.0.0.1", 8000);
        for ok in
            ["127.0.0.1:8000", "localhost:8000", "LOCALHOST:8000", "[::1]:8000", "127.1.2.3:8000"]
        {
            assert!(site.allows(ok), "{ok}");
        }
        for bad in [
            "127.0.0.1:8001",
            "127.0.0.1",
            "evil.example:8000",
            "localhost.evil.example:8000",
            "10.0.0.1:8000",
            "",
        ] {
            assert!(!site.allows(bad), "{bad}");
        }
    }

    #[test]
    fn a_named_server_answers_its_name_and_every_interface_any_address() {
        let site = Site::new("board.lan", 80);
        assert!(
            site.allows("board.lan") && site.allows("Board.LAN:80") && site.allows("board.lan.")
        );
        assert!(!site.allows("localhost") && !site.allows("127.0.0.1") && !site.allows("evil.lan"));
        let all = Site::new("0.0.0.0", 8000);
        assert!(all.allows("192.168.1.5:8000") && all.allows("[fe80::1]:8000"));
        assert!(all.allows("localhost:8000"));
        assert!(!all.allows("rebound.evil.example:8000"));
        let v6 = Site::new("::1", 9);
        assert!(v6.allows("[::1]:9") && v6.allows("localhost:9"));
    }
}
