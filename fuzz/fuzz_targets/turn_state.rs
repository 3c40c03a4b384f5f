//! Turn state documents as a store or a queue may hand them back, edited
//! by anyone: read with and without a key. Every input must end in a state
//! or an input error; a state read writes a document that reads back as
//! the same state, with its MAC and without.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_adapters::ErrorKind;
use mcp_adapters::exec::{StateKey, TurnState};

fuzz_target!(|data: &[u8]| {
    let key = StateKey::new(b"the fuzz target's key, 32 bytes.").unwrap();
    let read = [TurnState::from_json(data), TurnState::from_json_with_mac(data, &key)];
    for state in read {
        let state = match state {
            Ok(state) => state,
            Err(e) => {
                assert_eq!(e.kind(), ErrorKind::Input, "{e}");
                continue;
            }
        };
        let plain = state.to_json().unwrap();
        assert_eq!(TurnState::from_json(&plain).unwrap(), state);
        let bound = state.to_json_with_mac(&key).unwrap();
        assert_eq!(TurnState::from_json_with_mac(&bound, &key).unwrap(), state);
        let _ = state.waiting();
    }
});
