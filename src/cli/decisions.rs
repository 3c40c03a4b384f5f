//! `--approve-call` and `--deny-call`: each decision names one call of one
//! turn. In a run over several responses a call id may come back in a
//! later response (a provider's ids are unique within a response, not
//! across a conversation), so a decision either says its turn (`TURN:ID`)
//! or names an id that only one turn has; `#INDEX` names only a call that
//! has no id.

use mcp_adapters::{Error, ErrorKind, Result};

use super::RunArgs;

/// The calls of one turn a decision may name.
#[derive(Debug, Default)]
pub struct TurnCalls {
    /// Each call's position in the response and its id, if it has one.
    pub calls: Vec<(usize, Option<String>)>,
    /// The ids of the provider's approval requests for its hosted calls,
    /// and of code-mode programs' waiting calls: calls named by id alone.
    pub hosted: Vec<String>,
}

impl TurnCalls {
    /// The calls of an extracted response.
    pub fn of(extracted: &mcp_adapters::Extracted) -> Self {
        let calls = extracted
            .calls
            .iter()
            .map(|c| (c.index, c.call_id.clone()))
            .chain(
                extracted
                    .rejected
                    .iter()
                    .map(|c| (c.index, c.call_id.clone())),
            )
            .collect();
        let hosted = extracted
            .hosted
            .approvals
            .iter()
            .map(|a| a.id.clone())
            .collect();
        TurnCalls { calls, hosted }
    }

    /// The calls of `response` (none when it does not read: the turn then
    /// fails as it would have).
    pub fn extracted(
        provider: &mcp_adapters::Provider,
        listing: &mcp_adapters::Listing,
        response: &serde_json::Value,
    ) -> Self {
        match provider.extract_calls(response, listing) {
            Ok(extracted) => TurnCalls::of(&extracted),
            Err(_) => TurnCalls::default(),
        }
    }

    /// The calls of a recorded stream, read ahead of the turn.
    ///
    /// # Errors
    ///
    /// When the provider has no stream section.
    pub fn streamed(
        provider: &mcp_adapters::Provider,
        listing: &mcp_adapters::Listing,
        framing: mcp_adapters::stream::Framing,
        bytes: &[u8],
    ) -> Result<Self> {
        let mut read = provider.stream(listing)?.framing(framing);
        Ok(match read.push(bytes).and_then(|_| read.finish()) {
            Ok(streamed) => TurnCalls::of(&streamed.extracted),
            Err(_) => TurnCalls::default(),
        })
    }

    /// The waiting calls of a suspended turn.
    pub fn waiting(state: &mcp_adapters::exec::TurnState) -> Self {
        let mut turn = TurnCalls::default();
        for waiting in state.waiting() {
            match waiting.index {
                // Named by id alone, as a program's calls are (their index
                // is their place in their program, not in the response).
                _ if waiting.caller.code().is_some() => turn.hosted.extend(waiting.call_id),
                usize::MAX => turn.hosted.extend(waiting.call_id),
                index => turn.calls.push((index, waiting.call_id)),
            }
        }
        turn
    }

    /// Whether `id` names a call of this turn; an error when it is
    /// `#INDEX` and the call at that position has an id.
    fn names(&self, id: &str, flag: &str, turn: Option<usize>) -> Result<bool> {
        // A code-mode program's call, PROGRAM/N, is named through its
        // program's call (its calls are made as the program runs).
        if let Some((program, n)) = id.rsplit_once('/')
            && n.parse::<usize>().is_ok()
            && self.names(program, flag, turn).unwrap_or(false)
        {
            return Ok(true);
        }
        if let Some(index) = id.strip_prefix('#').and_then(|i| i.parse::<usize>().ok()) {
            let Some((_, call_id)) = self.calls.iter().find(|(i, _)| *i == index) else {
                return Ok(false);
            };
            return match call_id {
                None => Ok(true),
                Some(call_id) => {
                    let of_turn = turn.map(|t| format!(" of turn {t}")).unwrap_or_default();
                    Err(Error::new(
                        ErrorKind::Input,
                        format!(
                            "{flag} {id}: call {index}{of_turn} has the id `{}`: name it by its id ({flag} {}{})",
                            escape(call_id),
                            turn.map(|t| format!("{t}:")).unwrap_or_default(),
                            escape(call_id)
                        ),
                    ))
                }
            };
        }
        Ok(self
            .calls
            .iter()
            .any(|(_, call_id)| call_id.as_deref() == Some(id))
            || self.hosted.iter().any(|h| h == id))
    }
}

/// A decision the command line was given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    Approve(String),
    Deny(String),
}

impl Decision {
    fn flag(&self) -> &'static str {
        match self {
            Decision::Approve(_) => "--approve-call",
            Decision::Deny(_) => "--deny-call",
        }
    }

    fn id(&self) -> &str {
        match self {
            Decision::Approve(id) | Decision::Deny(id) => id,
        }
    }

    fn with_id(&self, id: &str) -> Decision {
        match self {
            Decision::Approve(_) => Decision::Approve(id.to_owned()),
            Decision::Deny(_) => Decision::Deny(id.to_owned()),
        }
    }

    /// `options` with this decision.
    pub fn apply(&self, options: mcp_adapters::ExecOptions) -> mcp_adapters::ExecOptions {
        match self {
            Decision::Approve(id) => options.approve_call(id),
            Decision::Deny(id) => options.deny_call(id, "the application refused it (--deny-call)"),
        }
    }
}

/// The decisions of `args`, in the order given.
fn given(args: &RunArgs) -> impl Iterator<Item = Decision> + '_ {
    args.approve_calls
        .iter()
        .map(|id| Decision::Approve(id.clone()))
        .chain(args.deny_calls.iter().map(|id| Decision::Deny(id.clone())))
}

/// Each turn's decisions (`turns[i]` is turn `i + 1`'s calls): a
/// `TURN:ID` goes to its turn (with several turns), a plain id to the one
/// turn that has it.
///
/// # Errors
///
/// [`ErrorKind::Input`] for an id that more than one turn has (naming two
/// of them), a turn that is not played, or `#INDEX` naming a call that has
/// an id.
pub fn bind(args: &RunArgs, turns: &[TurnCalls]) -> Result<Vec<Vec<Decision>>> {
    let mut bound: Vec<Vec<Decision>> = vec![Vec::new(); turns.len()];
    let several = turns.len() > 1;
    for decision in given(args) {
        let flag = decision.flag();
        let qualified = decision
            .id()
            .split_once(':')
            .filter(|_| several)
            .and_then(|(turn, id)| Some((turn.parse::<usize>().ok()?, id)));
        if let Some((turn, id)) = qualified {
            let Some(calls) = turn.checked_sub(1).and_then(|t| turns.get(t)) else {
                return Err(Error::new(
                    ErrorKind::Input,
                    format!(
                        "{flag} {}: this run has turns 1 to {}",
                        escape(decision.id()),
                        turns.len()
                    ),
                ));
            };
            if !calls.names(id, flag, Some(turn))? {
                eprintln!(
                    "warning: {flag} {} names no call of turn {turn}",
                    escape(decision.id())
                );
            }
            bound[turn - 1].push(decision.with_id(id));
            continue;
        }
        let id = decision.id();
        let mut named = Vec::new();
        for (i, calls) in turns.iter().enumerate() {
            if calls.names(id, flag, several.then_some(i + 1))? {
                named.push(i);
            }
        }
        match named.as_slice() {
            [] => {
                let which = if several { "any turn" } else { "this turn" };
                eprintln!("warning: {flag} {} names no call of {which}", escape(id));
                // Still given, for a call the response's calls do not show
                // (a hosted approval request the provider adds later).
                if let Some(first) = bound.first_mut() {
                    first.push(decision.clone());
                }
            }
            [one] => bound[*one].push(decision.clone()),
            [first, second, ..] => {
                let id = escape(id);
                return Err(Error::new(
                    ErrorKind::Input,
                    format!(
                        "{flag} {id} names a call of turn {} and one of turn {}: an approval holds for one call of one turn, so say which ({flag} {}:{id} or {flag} {}:{id})",
                        first + 1,
                        second + 1,
                        first + 1,
                        second + 1
                    ),
                ));
            }
        }
    }
    Ok(bound)
}

/// Each turn's options: `base` with the decisions that name its calls.
///
/// # Errors
///
/// As [`bind`].
pub fn options(
    args: &RunArgs,
    base: &mcp_adapters::ExecOptions,
    turns: &[TurnCalls],
) -> Result<Vec<mcp_adapters::ExecOptions>> {
    Ok(bind(args, turns)?
        .into_iter()
        .map(|decisions| decisions.iter().fold(base.clone(), |o, d| d.apply(o)))
        .collect())
}

/// What a resumed turn is about to send under an approval given now, on
/// stderr: each waiting call an `--approve-call` names (one waiting for
/// approval, and one whose questions or task wait, judged again at resume),
/// its tool and its arguments as the state document holds them (escaped),
/// so that the person approving sees what goes out.
pub fn announce(args: &RunArgs, state: &mcp_adapters::exec::TurnState) {
    let approved: Vec<&str> = args.approve_calls.iter().map(String::as_str).collect();
    for waiting in state.waiting() {
        let name = match (&waiting.call_id, waiting.index) {
            (Some(id), _) => id.clone(),
            (None, index) => format!("#{index}"),
        };
        if !approved.contains(&name.as_str()) {
            continue;
        }
        let arguments = serde_json::to_string(&waiting.arguments).unwrap_or_default();
        eprintln!(
            "resume: --approve-call {} sends `{}/{}` with {}",
            escape(&name),
            escape(&waiting.server_id),
            escape(&waiting.tool),
            escape(&arguments)
        );
    }
}

/// Text from a model response or a state document, as a terminal shows it.
fn escape(text: &str) -> std::borrow::Cow<'_, str> {
    mcp_adapters::toolset::escape_visible(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn turn(calls: &[(usize, Option<&str>)]) -> TurnCalls {
        TurnCalls {
            calls: calls
                .iter()
                .map(|(i, id)| (*i, id.map(str::to_owned)))
                .collect(),
            hosted: Vec::new(),
        }
    }

    fn args(approve: &[&str]) -> RunArgs {
        use clap::Parser;
        let mut argv = vec!["mcp-adapters", "run", "--provider", "p"];
        for id in approve {
            argv.extend(["--approve-call", id]);
        }
        match super::super::Cli::parse_from(argv).command {
            super::super::Command::Run(args) => args,
            _ => unreachable!(),
        }
    }

    #[test]
    fn an_id_two_turns_have_is_refused_naming_both() {
        let turns = [turn(&[(0, Some("toolu_1"))]), turn(&[(0, Some("toolu_1"))])];
        let err = bind(&args(&["toolu_1"]), &turns).unwrap_err();
        assert!(err.message().contains("turn 1 and one of turn 2"), "{err}");
        let bound = bind(&args(&["2:toolu_1"]), &turns).unwrap();
        assert_eq!(
            bound,
            vec![vec![], vec![Decision::Approve("toolu_1".into())]]
        );
    }

    #[test]
    fn an_id_one_turn_has_goes_to_that_turn() {
        let turns = [turn(&[(0, Some("a"))]), turn(&[(0, Some("b"))])];
        let bound = bind(&args(&["b"]), &turns).unwrap();
        assert_eq!(bound, vec![vec![], vec![Decision::Approve("b".into())]]);
        assert!(bind(&args(&["3:b"]), &turns).is_err());
    }

    #[test]
    fn an_index_names_only_a_call_without_an_id() {
        let with_ids = [turn(&[(0, Some("toolu_1")), (1, Some("toolu_2"))])];
        let err = bind(&args(&["#1"]), &with_ids).unwrap_err();
        assert!(err.message().contains("has the id `toolu_2`"), "{err}");
        let without = [turn(&[(0, None), (1, None)])];
        let bound = bind(&args(&["#1"]), &without).unwrap();
        assert_eq!(bound, vec![vec![Decision::Approve("#1".into())]]);
        // One index in two turns is one id in two turns.
        let two = [turn(&[(0, None)]), turn(&[(0, None)])];
        assert!(bind(&args(&["#0"]), &two).is_err());
        assert!(bind(&args(&["2:#0"]), &two).is_ok());
    }

    #[test]
    fn a_programs_call_is_named_through_its_programs_call() {
        let turns = [turn(&[(0, Some("toolu_1"))]), turn(&[(0, None)])];
        let bound = bind(&args(&["toolu_1/3", "#0/2"]), &turns).unwrap();
        assert_eq!(
            bound,
            vec![
                vec![Decision::Approve("toolu_1/3".into())],
                vec![Decision::Approve("#0/2".into())]
            ]
        );
    }
}
