//! Signing in to HTTP servers that require it, from the command line: the
//! authorization URL is printed on stderr, and the browser's redirect comes
//! back to a listener on a loopback port (RFC 8252), within a timeout; or,
//! with `--workload-token`, the workload's JWT is the grant and no one is
//! asked. Tokens are DPoP-bound as `--dpop` says.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_adapters::client::auth::{
    Dpop, FileTokenStore, OAuth, SignInAnswer, SignInReason, SignInRequest, WorkloadIdentity,
};
use mcp_adapters::{Error, ErrorKind, HubConfig, Result, ServerConfig};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;

/// How long a person has to sign in, by default.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);

/// The most bytes of a redirect's request head read.
const MAX_HEAD: usize = 16 * 1024;

/// Whether a server of `config` may need a sign-in: an HTTP server sent no
/// `Authorization` header.
pub fn needed(config: &HubConfig) -> bool {
    config.servers().iter().any(|(_, server)| match server {
        ServerConfig::Http { headers, .. } => !headers
            .keys()
            .any(|k| k.eq_ignore_ascii_case("authorization")),
        _ => false,
    })
}

/// `--dpop`.
#[derive(Debug, Clone, Copy, Default, clap::ValueEnum)]
pub enum DpopArg {
    /// With the servers whose metadata or challenge says they support DPoP.
    #[default]
    Auto,
    /// With every server: a Bearer token is refused.
    Required,
    /// Never: a server that requires DPoP-bound tokens fails to sign in.
    Off,
}

/// How the command line signs in.
pub struct SignIn<'a> {
    /// `--token-store`.
    pub store: Option<&'a Path>,
    /// How long a person has.
    pub timeout: Duration,
    /// `--workload-token`.
    pub workload_token: Option<&'a Path>,
    /// `--dpop`.
    pub dpop: DpopArg,
}

impl SignIn<'_> {
    /// The sign-in: the workload's JWT when there is one, else a person in
    /// a browser; tokens kept in the store when there is one, with the DPoP
    /// keys they are bound to (a kept sign-in is of no use without them).
    ///
    /// # Errors
    ///
    /// As [`browser`].
    pub async fn oauth(&self) -> Result<OAuth> {
        let mut oauth = match self.workload_token {
            Some(file) => OAuth::workload_identity(WorkloadIdentity::token_file(file)),
            None => browser(self.timeout).await?,
        };
        let mut dpop = match self.dpop {
            DpopArg::Auto => Dpop::when_supported(),
            DpopArg::Required => Dpop::required(),
            DpopArg::Off => Dpop::off(),
        };
        if let Some(path) = self.store {
            oauth = oauth.token_store(FileTokenStore::new(path));
            dpop = dpop.keep_key_in_store();
        }
        Ok(oauth.dpop(dpop))
    }
}

/// The sign-ins waiting for their redirect, by `state`.
type Waiting = Arc<Mutex<HashMap<String, (String, oneshot::Sender<String>)>>>;

/// A person's sign-in for the command line: a loopback listener for the
/// redirects, the URL on stderr.
///
/// # Errors
///
/// [`ErrorKind::Io`] when no loopback port can be listened on.
async fn browser(timeout: Duration) -> Result<OAuth> {
    let listener = TcpListener::bind("127.0.0.1:0").await.map_err(|e| {
        Error::new(
            ErrorKind::Io,
            "cannot listen on a loopback port for sign-in redirects",
        )
        .with_source(e)
    })?;
    let port = listener
        .local_addr()
        .map_err(|e| Error::new(ErrorKind::Io, "no loopback port").with_source(e))?
        .port();
    let redirect_uri = format!("http://127.0.0.1:{port}/callback");
    let waiting: Waiting = Arc::default();
    tokio::spawn(listen(listener, redirect_uri.clone(), waiting.clone()));
    let oauth = OAuth::new(redirect_uri.clone(), move |request: SignInRequest| {
        let (tx, rx) = oneshot::channel();
        if let Ok(mut waiting) = waiting.lock() {
            waiting.insert(request.state.clone(), (request.server.clone(), tx));
        }
        let why = match request.reason {
            SignInReason::StepUp => format!(
                " for more access ({})",
                request.scopes.join(" ")
            ),
            _ => String::new(),
        };
        eprintln!(
            "sign-in: server `{}` ({}) requires sign-in{why}. Open this URL in a browser:\n  {}\nsign-in: waiting up to {} s for the browser to come back to {}",
            request.server,
            request.server_url,
            request.authorization_url,
            timeout.as_secs(),
            request.redirect_uri,
        );
        Box::pin(async move {
            match rx.await {
                Ok(redirect) => SignInAnswer::Redirect(redirect),
                Err(_) => SignInAnswer::Refuse("the sign-in listener stopped".into()),
            }
        })
    })
    .sign_in_timeout(timeout);
    Ok(oauth)
}

/// Answers the browser's redirects, handing each to the sign-in it belongs to.
async fn listen(listener: TcpListener, redirect_uri: String, waiting: Waiting) {
    while let Ok((stream, _)) = listener.accept().await {
        let (redirect_uri, waiting) = (redirect_uri.clone(), waiting.clone());
        tokio::spawn(async move {
            let _ = tokio::time::timeout(
                Duration::from_secs(30),
                answer(stream, &redirect_uri, &waiting),
            )
            .await;
        });
    }
}

async fn answer(mut stream: TcpStream, redirect_uri: &str, waiting: &Waiting) {
    let mut head = Vec::new();
    let mut chunk = [0u8; 2048];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < MAX_HEAD {
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => head.extend_from_slice(&chunk[..n]),
        }
    }
    let head = String::from_utf8_lossy(&head);
    let mut request_line = head.lines().next().unwrap_or_default().split(' ');
    let (method, target) = (request_line.next(), request_line.next().unwrap_or_default());
    let (status, page) = match (method, target.split_once('?')) {
        (Some("GET"), Some(("/callback", query))) => deliver(redirect_uri, query, waiting),
        _ => ("404 Not Found", "Not a sign-in redirect.".to_owned()),
    };
    let response = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{page}",
        page.len()
    );
    let _ = stream.write_all(response.as_bytes()).await;
    let _ = stream.shutdown().await;
}

/// Hands the redirect with `query` to its sign-in; the page the browser shows.
fn deliver(redirect_uri: &str, query: &str, waiting: &Waiting) -> (&'static str, String) {
    let state = url::form_urlencoded::parse(query.as_bytes())
        .find(|(k, _)| k == "state")
        .map(|(_, v)| v.into_owned())
        .unwrap_or_default();
    let entry = waiting.lock().ok().and_then(|mut w| w.remove(&state));
    let Some((server, tx)) = entry else {
        return (
            "400 Bad Request",
            "This sign-in is not awaited (an old link, or the command has ended).".into(),
        );
    };
    let refused = url::form_urlencoded::parse(query.as_bytes()).any(|(k, _)| k == "error");
    if tx.send(format!("{redirect_uri}?{query}")).is_err() {
        // Its sign-in timed out (or the command is ending): nobody reads it.
        return (
            "400 Bad Request",
            format!(
                "The sign-in to {server} is no longer awaited (it timed out). Run the command again."
            ),
        );
    }
    let page = if refused {
        format!("The sign-in to {server} was refused. You can close this window.")
    } else {
        format!(
            "The sign-in to {server} was received. You can close this window and return to the terminal."
        )
    };
    ("200 OK", page)
}
