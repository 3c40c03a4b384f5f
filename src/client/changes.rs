//! Tool-list changes on a 2026-07-28 session: `notifications/tools/list_changed`
//! arrives only on a `subscriptions/listen` stream, which this watcher keeps
//! open and reads for the session's lifetime.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use rmcp::model::{ServerNotification, SubscriptionFilter};
use rmcp::service::{Peer, RoleClient, Subscription, SubscriptionEnd};

/// How often a subscription the server ended is opened again.
const REOPENINGS: usize = 5;

/// The task reading the subscription; dropping it stops the task (and the
/// subscription, which sends `notifications/cancelled`).
pub(crate) struct Watcher(tokio::task::JoinHandle<()>);

impl Drop for Watcher {
    fn drop(&mut self) {
        self.0.abort();
    }
}

fn filter() -> SubscriptionFilter {
    SubscriptionFilter::builder().tools_list_changed().build()
}

/// Opens the subscription when the session is 2026-07-28 or later and the
/// server announces list changes; each change bumps `version`. `None` when
/// there is nothing to watch (a legacy session's changes reach the client
/// handler instead) or the server refused within `timeout`.
pub(crate) async fn watch(
    name: &str,
    peer: &Peer<RoleClient>,
    version: Arc<AtomicU64>,
    timeout: Duration,
) -> Option<Watcher> {
    let info = peer.peer_info()?;
    let announces = info
        .capabilities
        .tools
        .as_ref()
        .is_some_and(|tools| tools.list_changed == Some(true));
    if info.protocol_version.has_initialize() || !announces {
        return None;
    }
    let subscription = match tokio::time::timeout(timeout, peer.listen(filter())).await {
        Ok(Ok(subscription)) => subscription,
        Ok(Err(e)) => {
            tracing::warn!(server = %name, error = %e, "subscriptions/listen failed; tool-list changes will not be seen");
            return None;
        }
        Err(_) => {
            tracing::warn!(server = %name, "subscriptions/listen was not acknowledged in time; tool-list changes will not be seen");
            return None;
        }
    };
    if subscription.acknowledged().tools_list_changed != Some(true) {
        return None;
    }
    let (name, peer) = (name.to_owned(), peer.clone());
    Some(Watcher(tokio::spawn(read(
        name,
        peer,
        subscription,
        version,
    ))))
}

async fn read(
    name: String,
    peer: Peer<RoleClient>,
    mut subscription: Subscription,
    version: Arc<AtomicU64>,
) {
    let mut reopened = 0;
    loop {
        match subscription.next().await {
            Ok(Some(ServerNotification::ToolListChangedNotification(_))) => {
                version.fetch_add(1, Ordering::SeqCst);
            }
            Ok(Some(_)) => {}
            Ok(None) => {
                let again = matches!(
                    subscription.end(),
                    Some(SubscriptionEnd::Lagged { .. } | SubscriptionEnd::Graceful(_))
                );
                if !again || reopened == REOPENINGS {
                    return;
                }
                // A change may have gone by while no stream was open.
                version.fetch_add(1, Ordering::SeqCst);
                reopened += 1;
                tokio::time::sleep(Duration::from_millis(100 * reopened as u64)).await;
                match peer.listen(filter()).await {
                    Ok(next) => subscription = next,
                    Err(e) => {
                        tracing::debug!(server = %name, error = %e, "could not listen for tool-list changes again");
                        return;
                    }
                }
            }
            Err(e) => {
                tracing::debug!(server = %name, error = %e, "the tool-list subscription failed");
                version.fetch_add(1, Ordering::SeqCst);
                return;
            }
        }
    }
}
