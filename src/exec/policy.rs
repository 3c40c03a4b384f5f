//! Policy: which calls run, which are denied, and which need an approver.

use std::collections::BTreeSet;
use std::sync::Arc;

use globset::GlobMatcher;

use super::future::BoxFuture;
use crate::callers::{Callers, CallersRule};
use crate::calls::ToolCall;
use crate::error::Result;
use crate::hosted::{HostedRefusal, HostedTools};
use crate::mcp::CreateMessageParams;
use crate::toolset::{DropReason, compile_glob, compile_tool_glob, tool_glob_covers};

/// What a policy says of a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Action {
    /// Run it.
    Allow,
    /// Ask the approver.
    Ask,
    /// Do not run it.
    Deny,
}

#[derive(Debug, Clone)]
struct Rule {
    action: Action,
    pattern: String,
    matcher: GlobMatcher,
    tainted_by: Vec<GlobMatcher>,
}

/// Policy: which calls run, which are denied, and which need an approver.
///
/// A [`Policy`] is a list of rules, each an action (`allow`, `ask`, `deny`)
/// and a glob over `server/tool` (MCP names; `*` matches any run of
/// characters, `/` included; a glob without `/` names a tool on any server,
/// so `delete_*` is `*/delete_*`), optionally only once certain servers have
/// tainted the conversation (their output is in the model's context; those
/// globs are over server ids).
///
/// **Precedence**, for the rules that match a call, whatever the order they
/// were added in (as a policy file's lists are read):
/// 1. a `deny` rule wins (a taint rule once its servers have tainted the
///    conversation);
/// 2. then an `ask` rule (a taint rule likewise): a call both an `allow` and
///    an `ask` rule match is asked about;
/// 3. then an `allow` rule;
/// 4. a call no rule matches gets the policy's default: [`Policy::new`] denies
///    it, [`Policy::allow_all`] allows it.
///
/// Within one action the first rule added is the one reported
/// ([`decide_with_rule`](Self::decide_with_rule)). Before this order, the
/// first `allow` or `ask` rule added decided; an `allow` rule written as an
/// exception to a later `ask` rule now decides nothing, and
/// [`order_changes`](Self::order_changes) names such rules (the source
/// builder logs them as warnings, the command line prints them).
///
/// ```
/// use mcp_adapters::Policy;
/// use mcp_adapters::exec::Action;
///
/// let policy = Policy::new()
///     .allow("github/*")?
///     .ask("github/create_*")?
///     .ask("github/merge_*")?
///     // once `web` has been read, ask before commenting on GitHub
///     .ask_when_tainted("github/add_comment", ["web"])?;
/// assert_eq!(policy.decide("github", "get_issue", &Default::default()), Action::Allow);
/// assert_eq!(policy.decide("github", "merge_pr", &Default::default()), Action::Ask);
/// assert_eq!(policy.decide("web", "fetch", &Default::default()), Action::Deny);
/// assert!(policy.order_changes().is_empty());
///
/// // An `ask` rule is decided before an `allow` rule, whatever their order.
/// let policy = Policy::allow_all().allow("*")?.ask("write_note")?;
/// assert_eq!(policy.decide("notes", "write_note", &Default::default()), Action::Ask);
/// assert!(policy.order_changes().is_empty());
///
/// // An `allow` written as an exception to a later `ask` decides nothing now.
/// let policy = Policy::new().allow("github/get_*")?.ask("github/*")?;
/// assert_eq!(policy.decide("github", "get_issue", &Default::default()), Action::Ask);
/// assert_eq!(policy.order_changes()[0].allow, "github/get_*");
///
/// // A bare tool glob holds on every server.
/// let policy = Policy::allow_all().deny("delete_*")?;
/// assert_eq!(policy.decide("files", "delete_file", &Default::default()), Action::Deny);
/// assert_eq!(policy.decide("files", "read_file", &Default::default()), Action::Allow);
/// # Ok::<(), mcp_adapters::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Policy {
    rules: Vec<Rule>,
    default: Action,
    callers: CallersRule,
}

impl Default for Policy {
    fn default() -> Self {
        Self::new()
    }
}

impl Policy {
    /// A policy that denies every call no rule allows.
    pub fn new() -> Self {
        Policy {
            rules: Vec::new(),
            default: Action::Deny,
            callers: CallersRule::new(),
        }
    }

    /// A policy that allows every call no rule denies or asks about.
    pub fn allow_all() -> Self {
        Policy {
            rules: Vec::new(),
            default: Action::Allow,
            callers: CallersRule::new(),
        }
    }

    fn rule(mut self, action: Action, pattern: &str, tainted_by: &[&str]) -> Result<Self> {
        self.rules.push(Rule {
            action,
            pattern: pattern.to_owned(),
            matcher: compile_tool_glob(pattern)?,
            tainted_by: tainted_by
                .iter()
                .map(|p| compile_glob(p))
                .collect::<Result<_>>()?,
        });
        Ok(self)
    }

    /// Allows calls matching `pattern`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`](crate::ErrorKind::Input) for an invalid glob.
    pub fn allow(self, pattern: &str) -> Result<Self> {
        self.rule(Action::Allow, pattern, &[])
    }

    /// Sends calls matching `pattern` to the approver.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`](crate::ErrorKind::Input) for an invalid glob.
    pub fn ask(self, pattern: &str) -> Result<Self> {
        self.rule(Action::Ask, pattern, &[])
    }

    /// Denies calls matching `pattern`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`](crate::ErrorKind::Input) for an invalid glob.
    pub fn deny(self, pattern: &str) -> Result<Self> {
        self.rule(Action::Deny, pattern, &[])
    }

    /// Sends calls matching `pattern` to the approver once any server matching
    /// one of `servers` (globs over server ids) has tainted the conversation.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`](crate::ErrorKind::Input) for an invalid glob.
    pub fn ask_when_tainted<'a>(
        self,
        pattern: &str,
        servers: impl IntoIterator<Item = &'a str>,
    ) -> Result<Self> {
        let servers: Vec<&str> = servers.into_iter().collect();
        self.rule(Action::Ask, pattern, &servers)
    }

    /// Denies calls matching `pattern` once any server matching one of `servers` has tainted the conversation.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`](crate::ErrorKind::Input) for an invalid glob.
    pub fn deny_when_tainted<'a>(
        self,
        pattern: &str,
        servers: impl IntoIterator<Item = &'a str>,
    ) -> Result<Self> {
        let servers: Vec<&str> = servers.into_iter().collect();
        self.rule(Action::Deny, pattern, &servers)
    }

    /// What the policy says of `server/tool` given the `taint`.
    pub fn decide(&self, server_id: &str, tool: &str, taint: &BTreeSet<String>) -> Action {
        self.decide_with_rule(server_id, tool, taint).0
    }

    /// The decision and the pattern of the rule that made it (`None` for the default).
    pub fn decide_with_rule(
        &self,
        server_id: &str,
        tool: &str,
        taint: &BTreeSet<String>,
    ) -> (Action, Option<&str>) {
        if self.rules.is_empty() {
            return (self.default, None);
        }
        let path = format!("{server_id}/{tool}");
        let tainted = |r: &Rule| {
            taint
                .iter()
                .any(|s| r.tainted_by.iter().any(|m| m.is_match(s)))
        };
        let matching: Vec<&Rule> = self
            .rules
            .iter()
            .filter(|r| r.matcher.is_match(&path))
            .filter(|r| r.tainted_by.is_empty() || tainted(r))
            .collect();
        let decisive = [Action::Deny, Action::Ask, Action::Allow]
            .into_iter()
            .find_map(|action| matching.iter().find(|r| r.action == action));
        decisive.map_or((self.default, None), |r| {
            (r.action, Some(r.pattern.as_str()))
        })
    }
}

impl Policy {
    /// Opens the tools matching `pattern` (a glob over `server/tool`, as
    /// the other rules' globs) to code the model writes, the model still
    /// calling them directly too: the [callers rule](crate::callers),
    /// which decides who may call a tool, as the other rules decide
    /// whether a call runs. No tool is open to code unless one of
    /// [`programmatic`](Self::programmatic),
    /// [`programmatic_only`](Self::programmatic_only) and
    /// [`programmatic_read_only`](Self::programmatic_read_only) opens it;
    /// a call from code is allowed, asked about or denied by the other
    /// rules like any call.
    ///
    /// ```
    /// use mcp_adapters::Policy;
    /// use mcp_adapters::callers::Callers;
    ///
    /// let policy = Policy::new()
    ///     .allow("inventory/*")?
    ///     .programmatic("inventory/get_*")?
    ///     .programmatic_only("inventory/get_demand")?;
    /// let tool = |name: &str| mcp_adapters::Tool::new(name, "", serde_json::json!({"type": "object"}));
    /// assert_eq!(policy.callers("inventory", &tool("get_stock")), Callers::ModelAndCode);
    /// assert_eq!(policy.callers("inventory", &tool("get_demand")), Callers::Code);
    /// assert_eq!(policy.callers("inventory", &tool("set_stock")), Callers::Model);
    /// # Ok::<(), mcp_adapters::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`](crate::ErrorKind::Input) for an invalid glob.
    pub fn programmatic(mut self, pattern: &str) -> Result<Self> {
        self.callers = self.callers.open(pattern)?;
        Ok(self)
    }

    /// Opens the tools matching `pattern` to code only: the model does not
    /// call them directly (see [`programmatic`](Self::programmatic)).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`](crate::ErrorKind::Input) for an invalid glob.
    pub fn programmatic_only(mut self, pattern: &str) -> Result<Self> {
        self.callers = self.callers.only(pattern)?;
        Ok(self)
    }

    /// Opens every tool its server annotates `readOnlyHint: true` to code
    /// as well as the model (see [`programmatic`](Self::programmatic)).
    pub fn programmatic_read_only(mut self) -> Self {
        self.callers = self.callers.read_only(true);
        self
    }

    /// The callers rule: which tools code may call.
    pub fn callers_rule(&self) -> &CallersRule {
        &self.callers
    }

    /// Who may call `tool` of `server_id` under the callers rule.
    pub fn callers(&self, server_id: &str, tool: &crate::mcp::Tool) -> Callers {
        self.callers.callers(server_id, tool)
    }
}

impl Policy {
    /// Whether some call of `server_id/tool` may run, at once or once an
    /// approver allows it, under some taint: `false` when the policy
    /// denies it under every condition, which is when a `deny` rule that
    /// depends on no taint matches it, or when no `allow` or `ask` rule
    /// (taint-dependent ones included) matches it and the default denies.
    /// The rules' order does not matter to it. A source's listing leaves out
    /// the tools for which this is `false`
    /// ([`DropReason::DeniedByPolicy`]): the model is not offered what can
    /// never run.
    ///
    /// ```
    /// use mcp_adapters::Policy;
    ///
    /// let policy = Policy::new()
    ///     .allow("everything/echo")?
    ///     .ask_when_tainted("everything/get-env", ["web"])?
    ///     .deny("*/delete_*")?;
    /// assert!(policy.may_run("everything", "echo"));
    /// assert!(policy.may_run("everything", "get-env"));  // asked about, once `web` was read
    /// assert!(!policy.may_run("everything", "get-sum")); // no rule allows it
    /// assert!(!policy.may_run("files", "delete_file"));  // denied whatever else matches
    /// # Ok::<(), mcp_adapters::Error>(())
    /// ```
    pub fn may_run(&self, server_id: &str, tool: &str) -> bool {
        if self.rules.is_empty() {
            return self.default != Action::Deny;
        }
        let path = format!("{server_id}/{tool}");
        let mut allowed = self.default != Action::Deny;
        for rule in self.rules.iter().filter(|r| r.matcher.is_match(&path)) {
            match rule.action {
                Action::Deny if rule.tainted_by.is_empty() => return false,
                Action::Deny => {}
                Action::Allow | Action::Ask => allowed = true,
            }
        }
        allowed
    }

    /// Why a tool is never offered under this policy: `None` when some
    /// call of it may run ([`may_run`](Self::may_run)).
    pub(crate) fn never_offered(&self, server_id: &str, tool: &str) -> Option<DropReason> {
        if self.may_run(server_id, tool) {
            return None;
        }
        // With no taint only the rules that depend on none hold: the one
        // that denies it, or none (the default).
        let (_, rule) = self.decide_with_rule(server_id, tool, &BTreeSet::new());
        Some(DropReason::DeniedByPolicy {
            rule: rule.map(str::to_owned),
        })
    }

    /// Each rule's kind (`policy allow`, `policy ask`, `policy deny`) and
    /// glob, in order.
    pub(crate) fn rules(&self) -> impl Iterator<Item = (&'static str, &str)> {
        self.rules.iter().map(|r| {
            let kind = match r.action {
                Action::Allow => "policy allow",
                Action::Ask => "policy ask",
                Action::Deny => "policy deny",
            };
            (kind, r.pattern.as_str())
        })
    }

    /// Whether a rule depends on what the conversation has seen
    /// ([`ask_when_tainted`](Self::ask_when_tainted),
    /// [`deny_when_tainted`](Self::deny_when_tainted)).
    pub fn depends_on_taint(&self) -> bool {
        self.rules.iter().any(|r| !r.tainted_by.is_empty())
    }

    /// The `allow` rules the order `deny`, `ask`, `allow` leaves deciding
    /// nothing, each with the `ask` rule that takes its tools: an `allow`
    /// rule added before an `ask` rule (as a policy file's `allow` list is
    /// read before its `ask` list) that matches no tool the `ask` rule does
    /// not. Such an `allow` was written as an exception to the `ask`
    /// (`allow: [github/get_*]` with `ask: [github/*]`), which only the
    /// former order (the first `allow` or `ask` rule decides) honoured: its
    /// tools are now asked about. An `ask` rule inside an `allow` rule
    /// (`allow: ["*"]` with `ask: [write_note]`) is what the order is for,
    /// and not reported; nor is a partial overlap (`s/a*` and `s/*b`).
    /// Globs of literals, `?` and `*` are compared on their wildcards; a
    /// glob with a class or an alternative is inside another when that one
    /// matches it as written.
    pub fn order_changes(&self) -> Vec<OrderChange> {
        let mut changes = Vec::new();
        for (i, allow) in self.rules.iter().enumerate() {
            if allow.action != Action::Allow {
                continue;
            }
            let asks = self.rules[i + 1..]
                .iter()
                .filter(|r| r.action == Action::Ask && r.tainted_by.is_empty());
            for ask in asks {
                if tool_glob_covers(&ask.pattern, &allow.pattern) {
                    changes.push(OrderChange {
                        allow: allow.pattern.clone(),
                        ask: ask.pattern.clone(),
                    });
                }
            }
        }
        changes
    }

    /// What a server the provider hosts may run under this policy:
    /// [`HostedTools::All`] when nothing in the policy singles out any of
    /// its tools, else the tools it allows (`run`) and those it asks about
    /// (`ask`), from `tools`, the server's tool names (from a local
    /// listing, or the provider's own). A policy that denies what it does
    /// not name and names the server's tools exactly
    /// (`allow: [deepwiki/ask_question]`) needs no names: the ones it
    /// names are all it allows.
    ///
    /// # Errors
    ///
    /// [`HostedRefusal::ToolNamesNeeded`] when, without `tools`, the policy
    /// singles out some of the server's tools by a glob; [`HostedRefusal::Refused`]
    /// when it cannot be hosted under the policy at all: a rule that depends
    /// on what the conversation has seen (`ask_when_tainted`,
    /// `deny_when_tainted`), which a provider cannot check between its own
    /// calls, or a policy that denies every tool of it. Either way the
    /// server runs locally.
    pub fn hosted_tools(
        &self,
        server_id: &str,
        tools: Option<&[String]>,
    ) -> std::result::Result<HostedTools, HostedRefusal> {
        // A rule concerns the server when its server part may match it; a
        // glob that cannot be cut there (`{a/x,b/y}`, a class holding `/`)
        // concerns every server.
        let relevant: Vec<&Rule> = self
            .rules
            .iter()
            .filter(|r| match r.pattern.split_once('/') {
                None => true,
                Some((server, _)) if server.contains(['{', '[']) => true,
                Some((server, _)) => compile_glob(server).map_or(true, |m| m.is_match(server_id)),
            })
            .collect();
        if let Some(rule) = relevant.iter().find(|r| !r.tainted_by.is_empty()) {
            return Err(HostedRefusal::Refused(format!(
                "the policy's rule `{}` depends on what the conversation has seen, which the provider cannot check between its own calls",
                rule.pattern
            )));
        }
        if relevant.is_empty() && self.default == Action::Allow {
            return Ok(HostedTools::All);
        }
        let none = BTreeSet::new();
        match tools {
            Some(names) => {
                let (mut run, mut ask) = (Vec::new(), Vec::new());
                for name in names {
                    match self.decide(server_id, name, &none) {
                        Action::Allow => run.push(name.clone()),
                        Action::Ask => ask.push(name.clone()),
                        Action::Deny => {}
                    }
                }
                Ok(HostedTools::Only { run, ask })
            }
            None if let Some(named) =
                exact_names(&relevant).filter(|_| self.default == Action::Deny) =>
            {
                // Every rule names its tools exactly and the rest is
                // denied: the names are all there is to decide on.
                let (mut run, mut ask) = (Vec::new(), Vec::new());
                for name in named {
                    match self.decide(server_id, &name, &none) {
                        Action::Allow => run.push(name),
                        Action::Ask => ask.push(name),
                        Action::Deny => {}
                    }
                }
                if run.is_empty() && ask.is_empty() {
                    return Err(HostedRefusal::Refused(
                        "the policy denies every tool of it".to_owned(),
                    ));
                }
                Ok(HostedTools::Only { run, ask })
            }
            None => {
                let server_wide = relevant.iter().all(|r| match r.pattern.split_once('/') {
                    Some((server, tool)) => {
                        !server.contains(['{', '[']) && matches!(tool, "*" | "**")
                    }
                    None => false,
                });
                // A name no glob but a server-wide one can match.
                let any = "\u{0}";
                match (server_wide, self.decide(server_id, any, &none)) {
                    (true, Action::Allow) => Ok(HostedTools::All),
                    (true, Action::Deny) => Err(HostedRefusal::Refused(
                        "the policy denies every tool of it".to_owned(),
                    )),
                    _ => Err(HostedRefusal::ToolNamesNeeded),
                }
            }
        }
    }
}

/// The tool names `rules` name, when each names its tool exactly (no glob
/// character in its tool part; the server part may be a glob), in the
/// order first named; `None` when one of them is a glob over tool names.
fn exact_names(rules: &[&Rule]) -> Option<Vec<String>> {
    let mut names: Vec<String> = Vec::new();
    for rule in rules {
        let tool = rule
            .pattern
            .split_once('/')
            .map_or(rule.pattern.as_str(), |(_, tool)| tool);
        if tool.is_empty() || tool.contains(['*', '?', '[', ']', '{', '}', '\\']) {
            return None;
        }
        if !names.iter().any(|n| n == tool) {
            names.push(tool.to_owned());
        }
    }
    Some(names)
}

/// An `allow` rule inside a later `ask` rule: its tools, which it once
/// ran, are now asked about (see [`Policy::order_changes`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct OrderChange {
    /// The `allow` rule's glob.
    pub allow: String,
    /// The `ask` rule's glob.
    pub ask: String,
}

impl std::fmt::Display for OrderChange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the policy's `allow: {}` is inside its `ask: {}`: `ask` rules are decided before `allow` rules whatever their order, so the tools it allows are asked about (narrow the `ask` rule if they should run)",
            self.allow, self.ask
        )
    }
}

/// A call awaiting approval, or a sampling request a server made (see
/// [`sampling`](Self::sampling)).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ApprovalRequest {
    /// The call: its server, the tool's name there, the name the model
    /// called, its id and the arguments the model sent.
    pub call: ToolCall,
    /// Who the call is made for.
    pub principal: Option<String>,
    /// Servers whose output is already in the model's context.
    pub taint: BTreeSet<String>,
    /// Set when what awaits approval is not the call but a completion its
    /// server asked the application's model for (the [`Sampling`](crate::exec::Sampling)
    /// policy said `ask`): the request as the handler would get it. The
    /// [`call`](Self::call) is then the call it belongs to, with only its
    /// server and tool set when it belongs to no single call.
    pub sampling: Option<Box<CreateMessageParams>>,
}

/// An approver's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Approval {
    /// Run the call.
    Allow,
    /// Do not run it; the reason goes to the model.
    Deny(String),
    /// Do not run it, and halt the agent loop after this turn.
    DenyAndHalt(String),
    /// No answer now: with [`ExecOptions::suspend`](crate::exec::ExecOptions::suspend)
    /// the call waits (unsent) and the turn is suspended, to be resumed once
    /// the answer is there; otherwise the call is denied, and the model told
    /// it got no answer.
    Later,
}

/// Decides calls a policy `ask`s about.
pub type Approver = Arc<dyn Fn(ApprovalRequest) -> BoxFuture<'static, Approval> + Send + Sync>;

#[cfg(test)]
mod tests {
    use super::*;

    fn taint(ids: &[&str]) -> BTreeSet<String> {
        ids.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn deny_then_ask_then_allow_whatever_the_order() {
        let p = Policy::new()
            .ask("gh/*")
            .unwrap()
            .allow("*")
            .unwrap()
            .deny("gh/delete_*")
            .unwrap();
        assert_eq!(p.decide("x", "y", &taint(&[])), Action::Allow);
        assert_eq!(p.decide("gh", "create", &taint(&[])), Action::Ask);
        assert_eq!(p.decide("gh", "delete_repo", &taint(&[])), Action::Deny);
        assert_eq!(
            p.decide_with_rule("gh", "delete_repo", &taint(&[])).1,
            Some("gh/delete_*")
        );
        assert!(p.order_changes().is_empty());
        let p = Policy::new()
            .allow("gh/get_*")
            .unwrap()
            .ask("gh/*")
            .unwrap();
        assert_eq!(p.decide("gh", "get_issue", &taint(&[])), Action::Ask);
        assert_eq!(
            p.decide_with_rule("gh", "get_issue", &taint(&[])).1,
            Some("gh/*")
        );
        assert_eq!(p.decide("gh", "merge", &taint(&[])), Action::Ask);
        assert_eq!(
            p.order_changes(),
            vec![OrderChange {
                allow: "gh/get_*".into(),
                ask: "gh/*".into()
            }]
        );
        let p = Policy::allow_all()
            .allow("*")
            .unwrap()
            .ask("write_note")
            .unwrap();
        assert_eq!(p.decide("notes", "write_note", &taint(&[])), Action::Ask);
        assert_eq!(p.decide("notes", "read_note", &taint(&[])), Action::Allow);
        assert!(p.order_changes().is_empty());
    }

    #[test]
    fn order_changes_are_the_allow_rules_inside_later_asks() {
        let changes = |p: Policy| p.order_changes().len();
        let p = Policy::new;
        assert_eq!(
            changes(p().allow("gh/get_*").unwrap().ask("gh/*").unwrap()),
            1
        );
        assert_eq!(
            changes(p().allow("gh/get_?").unwrap().ask("*/get_*").unwrap()),
            1
        );
        assert_eq!(changes(p().allow("delete_x").unwrap().ask("*").unwrap()), 1);
        assert_eq!(
            changes(p().allow("s/{a,b}").unwrap().ask("s/*").unwrap()),
            1
        );
        assert!(
            p().allow("a/b")
                .unwrap()
                .ask("a/?")
                .unwrap()
                .order_changes()[0]
                .to_string()
                .contains("`allow: a/b` is inside its `ask: a/?`")
        );
        // An `ask` inside the `allow`, disjoint globs, partial overlaps, an
        // `ask` added first, a wildcard wider than the `ask`'s: no change.
        assert_eq!(
            changes(p().allow("*").unwrap().ask("write_note").unwrap()),
            0
        );
        assert_eq!(
            changes(p().allow("gh/get_*").unwrap().ask("gh/create_*").unwrap()),
            0
        );
        assert_eq!(changes(p().allow("s/a*").unwrap().ask("s/*b").unwrap()), 0);
        assert_eq!(
            changes(p().ask("gh/*").unwrap().allow("gh/get_*").unwrap()),
            0
        );
        assert_eq!(changes(p().allow("s/a*").unwrap().ask("s/a?").unwrap()), 0);
        assert_eq!(changes(p().allow("s/x").unwrap().ask("s/x?").unwrap()), 0);
        // A taint rule escalated an `allow` before too.
        assert_eq!(
            changes(
                p().allow("gh/x")
                    .unwrap()
                    .ask_when_tainted("gh/*", ["web"])
                    .unwrap()
            ),
            0
        );
    }

    #[test]
    fn defaults() {
        assert_eq!(Policy::new().decide("a", "b", &taint(&[])), Action::Deny);
        assert_eq!(
            Policy::allow_all().decide("a", "b", &taint(&[])),
            Action::Allow
        );
    }

    #[test]
    fn taint_conditions() {
        let p = Policy::new()
            .allow("github/*")
            .unwrap()
            .ask_when_tainted("github/create_*", ["web", "fetch*"])
            .unwrap();
        assert_eq!(
            p.decide("github", "create_issue", &taint(&[])),
            Action::Allow
        );
        assert_eq!(
            p.decide("github", "create_issue", &taint(&["web"])),
            Action::Ask
        );
        assert_eq!(
            p.decide("github", "create_issue", &taint(&["fetcher"])),
            Action::Ask
        );
        assert_eq!(
            p.decide("github", "get_issue", &taint(&["web"])),
            Action::Allow
        );
        let p = Policy::allow_all()
            .deny_when_tainted("*/send_*", ["*"])
            .unwrap();
        assert_eq!(
            p.decide("mail", "send_mail", &taint(&["any"])),
            Action::Deny
        );
    }

    /// What can never run is told apart from what may, taint or not, and
    /// the rules' order does not change it.
    #[test]
    fn may_run_is_the_same_in_every_order_of_the_rules() {
        type R = (Action, &'static str, &'static [&'static str]);
        let rules: [R; 5] = [
            (Action::Allow, "gh/get_*", &[]),
            (Action::Ask, "gh/merge_*", &[]),
            (Action::Allow, "gh/create_*", &["web"]),
            (Action::Deny, "gh/delete_*", &[]),
            (Action::Deny, "gh/get_secret", &["*"]),
        ];
        // (tool, may run under `Policy::new()`, under `Policy::allow_all()`)
        let expected = [
            ("get_issue", true, true),
            ("get_secret", true, true), // denied once tainted, allowed before
            ("merge_pr", true, true),   // asked about
            ("create_issue", true, true), // allowed once `web` tainted
            ("delete_repo", false, false), // denied whatever else matches
            ("list_issues", false, true), // the default decides
        ];
        let mut order: Vec<usize> = (0..rules.len()).collect();
        let mut orders = Vec::new();
        permutations(&mut order, 0, &mut orders);
        assert_eq!(orders.len(), 120);
        for order in orders {
            for (base, column) in [(Policy::new(), 1), (Policy::allow_all(), 2)] {
                let policy = order.iter().fold(base, |p, &i| {
                    let (action, pattern, taint) = rules[i];
                    p.rule(action, pattern, taint).unwrap()
                });
                for (tool, new, all) in expected {
                    let want = if column == 1 { new } else { all };
                    assert_eq!(
                        policy.may_run("gh", tool),
                        want,
                        "{tool} in order {order:?}"
                    );
                    // The decision with no taint never allows what may not run.
                    if !want {
                        assert_eq!(policy.decide("gh", tool, &taint(&[])), Action::Deny);
                    }
                }
            }
        }
        let denied = Policy::new()
            .allow("gh/*")
            .unwrap()
            .deny("gh/delete_*")
            .unwrap();
        assert_eq!(
            denied.never_offered("gh", "delete_repo"),
            Some(DropReason::DeniedByPolicy {
                rule: Some("gh/delete_*".into())
            })
        );
        assert_eq!(
            Policy::new().never_offered("gh", "x"),
            Some(DropReason::DeniedByPolicy { rule: None })
        );
        assert_eq!(denied.never_offered("gh", "get_issue"), None);
    }

    fn permutations(items: &mut Vec<usize>, k: usize, out: &mut Vec<Vec<usize>>) {
        if k == items.len() {
            out.push(items.clone());
            return;
        }
        for i in k..items.len() {
            items.swap(k, i);
            permutations(items, k + 1, out);
            items.swap(k, i);
        }
    }

    #[test]
    fn bad_globs_are_errors() {
        assert!(Policy::new().allow("[").is_err());
        assert!(Policy::new().ask_when_tainted("x", ["["]).is_err());
    }
}
