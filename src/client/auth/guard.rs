//! The HTTP client of a sign-in's OAuth requests (discovery, registration,
//! token requests, the enterprise-managed token exchange): a host named by a
//! server's metadata resolves only to public addresses, or to the kind of
//! address the MCP server itself is on (loopback for a server on
//! `localhost`, private for one on a private address), whether it is a
//! name or an IP literal, on the first request and on every redirect, as the
//! SDK's own client does. The DPoP binding's client
//! ([`ProofHttp`](super::binding::ProofHttp)) sends through it.

use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::sync::Arc;

use futures_util::StreamExt;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use rmcp::transport::auth::{
    OAuthHttpClient, OAuthHttpClientError, OAuthHttpClientFuture, OAuthHttpRedirectPolicy,
    OAuthHttpRequest,
};
use url::{Host, Url};

/// The most bytes read of a response: token responses are small.
const MAX_BODY: usize = 1 << 20;
const MAX_REDIRECTS: usize = 5;
const TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// What kind of address an IP is, for the guard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Public,
    Loopback,
    Private,
    /// Never reached: link-local (cloud metadata endpoints), unspecified,
    /// multicast, broadcast, documentation and other reserved ranges.
    Refused,
}

fn kind(ip: IpAddr) -> Kind {
    let ip = match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4),
        v4 => v4,
    };
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            if v4.is_loopback() {
                Kind::Loopback
            } else if v4.is_private() || (a == 100 && (64..128).contains(&b)) {
                Kind::Private
            } else if v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_multicast()
                || v4.is_broadcast()
                || v4.is_documentation()
                || a == 0
                || a >= 240
            {
                Kind::Refused
            } else {
                Kind::Public
            }
        }
        IpAddr::V6(v6) => {
            let first = v6.segments()[0];
            if v6.is_loopback() {
                Kind::Loopback
            } else if first & 0xfe00 == 0xfc00 {
                Kind::Private
            } else if v6.is_unspecified()
                || v6.is_multicast()
                || first & 0xffc0 == 0xfe80
                || first == 0x2001 && v6.segments()[1] == 0x0db8
            {
                Kind::Refused
            } else {
                Kind::Public
            }
        }
    }
}

/// The kinds of address requests may reach, from the MCP server's URL.
#[derive(Debug, Clone)]
struct Allowed(Vec<Kind>);

impl Allowed {
    fn for_server(server_url: &str) -> Allowed {
        let mut kinds = vec![Kind::Public];
        match Url::parse(server_url)
            .ok()
            .and_then(|u| u.host().map(|h| h.to_owned()))
        {
            Some(Host::Ipv4(v4)) => kinds.push(kind(IpAddr::V4(v4))),
            Some(Host::Ipv6(v6)) => kinds.push(kind(IpAddr::V6(v6))),
            Some(Host::Domain(d)) if d.eq_ignore_ascii_case("localhost") => {
                kinds.push(Kind::Loopback)
            }
            _ => {}
        }
        kinds.retain(|k| *k != Kind::Refused);
        Allowed(kinds)
    }

    fn allows(&self, ip: IpAddr) -> bool {
        self.0.contains(&kind(ip))
    }

    /// Whether `url`'s host may be asked: an IP literal of an allowed kind, or a
    /// name (its addresses are checked when it resolves).
    fn allows_url(&self, url: &Url) -> bool {
        match url.host() {
            Some(Host::Ipv4(v4)) => self.allows(IpAddr::V4(v4)),
            Some(Host::Ipv6(v6)) => self.allows(IpAddr::V6(v6)),
            Some(Host::Domain(_)) => true,
            None => false,
        }
    }
}

/// Resolves names with the system resolver, keeping the allowed addresses only.
struct Resolver(Arc<Allowed>);

impl Resolve for Resolver {
    fn resolve(&self, name: Name) -> Resolving {
        let allowed = self.0.clone();
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let lookup = host.clone();
            let addrs: Vec<SocketAddr> =
                tokio::task::spawn_blocking(move || (lookup.as_str(), 0).to_socket_addrs())
                    .await??
                    .filter(|a| allowed.allows(a.ip()))
                    .collect();
            if addrs.is_empty() {
                return Err(Refused(format!(
                    "`{host}` resolves to no address an MCP server's sign-in may reach (private, loopback and link-local addresses are refused)"
                ))
                .into());
            }
            Ok(Box::new(addrs.into_iter()) as Addrs)
        })
    }
}

/// A request refused by the guard (or a response by the sign-in's client).
#[derive(Debug)]
pub(crate) struct Refused(pub(crate) String);

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Refused {}

/// An [`OAuthHttpClient`] whose requests reach only the addresses
/// [`Allowed`] lets through.
pub(crate) struct GuardedHttp {
    follow: reqwest::Client,
    stop: reqwest::Client,
    allowed: Arc<Allowed>,
}

impl GuardedHttp {
    /// The client for the sign-in of the MCP server at `server_url`.
    pub(crate) fn for_server(server_url: &str) -> Result<GuardedHttp, reqwest::Error> {
        let allowed = Arc::new(Allowed::for_server(server_url));
        let build = |redirect: reqwest::redirect::Policy| {
            reqwest::Client::builder()
                .timeout(TIMEOUT)
                .redirect(redirect)
                .dns_resolver(Arc::new(Resolver(allowed.clone())))
                .build()
        };
        let policy = allowed.clone();
        let follow = reqwest::redirect::Policy::custom(move |attempt| {
            if !policy.allows_url(attempt.url()) {
                let refused = Refused(format!(
                    "a redirect to {} was refused: an address the sign-in may not reach",
                    attempt.url()
                ));
                attempt.error(refused)
            } else if attempt.previous().len() >= MAX_REDIRECTS {
                attempt.error(Refused(format!("more than {MAX_REDIRECTS} redirects")))
            } else {
                attempt.follow()
            }
        });
        Ok(GuardedHttp {
            follow: build(follow)?,
            stop: build(reqwest::redirect::Policy::none())?,
            allowed,
        })
    }
}

impl GuardedHttp {
    /// Sends `request` (redirects followed or not, as `policy` says) and
    /// reads its response, within the guard's addresses and size bound.
    pub(crate) async fn send(
        &self,
        request: oauth2::http::Request<Vec<u8>>,
        policy: OAuthHttpRedirectPolicy,
    ) -> Result<oauth2::http::Response<Vec<u8>>, OAuthHttpClientError> {
        let client = match policy {
            OAuthHttpRedirectPolicy::Stop => &self.stop,
            _ => &self.follow,
        };
        let request =
            reqwest::Request::try_from(request).map_err(|e| Box::new(e) as OAuthHttpClientError)?;
        if !self.allowed.allows_url(request.url()) {
            return Err(Box::new(Refused(format!(
                "{} is an address the sign-in may not reach (private, loopback or link-local)",
                request.url()
            ))) as OAuthHttpClientError);
        }
        let response = client
            .execute(request)
            .await
            .map_err(|e| Box::new(e) as OAuthHttpClientError)?;
        let mut builder = oauth2::http::Response::builder()
            .status(response.status())
            .version(response.version());
        for (name, value) in response.headers() {
            builder = builder.header(name, value);
        }
        let mut body = Vec::new();
        let mut chunks = response.bytes_stream();
        while let Some(chunk) = chunks.next().await {
            let chunk = chunk.map_err(|e| Box::new(e) as OAuthHttpClientError)?;
            if body.len() + chunk.len() > MAX_BODY {
                return Err(Box::new(Refused(format!(
                    "the response is larger than {MAX_BODY} bytes"
                ))) as OAuthHttpClientError);
            }
            body.extend_from_slice(&chunk);
        }
        builder
            .body(body)
            .map_err(|e| Box::new(e) as OAuthHttpClientError)
    }
}

impl OAuthHttpClient for GuardedHttp {
    fn execute(&self, request: OAuthHttpRequest) -> OAuthHttpClientFuture<'_> {
        Box::pin(self.send(request.request, request.redirect_policy))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn addresses_are_told_apart() {
        assert_eq!(kind(ip("8.8.8.8")), Kind::Public);
        assert_eq!(kind(ip("127.0.0.1")), Kind::Loopback);
        assert_eq!(kind(ip("::1")), Kind::Loopback);
        assert_eq!(kind(ip("10.1.2.3")), Kind::Private);
        assert_eq!(kind(ip("100.64.0.1")), Kind::Private);
        assert_eq!(kind(ip("fd00::1")), Kind::Private);
        assert_eq!(kind(ip("169.254.169.254")), Kind::Refused);
        assert_eq!(kind(ip("fe80::1")), Kind::Refused);
        assert_eq!(kind(ip("0.0.0.0")), Kind::Refused);
        assert_eq!(kind(ip("::ffff:10.0.0.1")), Kind::Private);
        assert_eq!(kind(ip("::ffff:169.254.169.254")), Kind::Refused);
        assert_eq!(kind(ip("2606:4700::1111")), Kind::Public);
    }

    #[test]
    fn a_public_server_reaches_public_addresses_only() {
        let allowed = Allowed::for_server("https://mcp.example.com/mcp");
        assert!(allowed.allows(ip("93.184.216.34")));
        for refused in [
            "127.0.0.1",
            "10.0.0.5",
            "192.168.1.1",
            "169.254.169.254",
            "::1",
        ] {
            assert!(!allowed.allows(ip(refused)), "{refused}");
        }
        let url = |s: &str| Url::parse(s).unwrap();
        assert!(!allowed.allows_url(&url("http://127.0.0.1:9000/token")));
        assert!(!allowed.allows_url(&url("https://[fd00::5]/token")));
        assert!(allowed.allows_url(&url("https://as.example.com/token")));
    }

    #[test]
    fn a_local_server_reaches_its_own_kind_of_address_but_never_link_local() {
        let local = Allowed::for_server("http://localhost:8080/mcp");
        assert!(local.allows(ip("127.0.0.1")));
        assert!(!local.allows(ip("10.0.0.5")));
        let private = Allowed::for_server("http://10.0.0.2/mcp");
        assert!(private.allows(ip("10.9.9.9")));
        assert!(!private.allows(ip("127.0.0.1")));
        let odd = Allowed::for_server("http://169.254.169.254/mcp");
        assert!(!odd.allows(ip("169.254.169.254")));
    }
}
