//! Installs everything the tests use (see the library's docs), so that an
//! install can run while the tests build. Prints one line per install; exits
//! with an error when one failed (the tests would then try again and fail
//! with the same reason).

fn main() {
    let fetched = test_installs::prefetch();
    let mut failed = 0;
    for fetched in &fetched {
        match &fetched.result {
            Ok(path) => println!("prefetch: {} ready at {}", fetched.what, path.display()),
            Err(e) => {
                failed += 1;
                eprintln!("prefetch: {} failed: {e}", fetched.what);
            }
        }
    }
    if failed > 0 {
        eprintln!("prefetch: {failed} of {} installs failed", fetched.len());
        std::process::exit(1);
    }
}
