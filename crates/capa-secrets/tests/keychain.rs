//! Round trip through the real OS keychain. On Linux CI this runs inside
//! `tests/support/with-keyring.sh` (gnome-keyring on a private D-Bus session).

use capa_secrets::{Keychain, Secret, SecretKey};

#[test]
fn secrets_round_trip_through_the_os_keychain() {
    let keychain = Keychain::new(format!("capabilities-test-{}", std::process::id()));
    if let Err(e) = keychain.check() {
        assert!(
            std::env::var_os("CAPA_REQUIRE_KEYCHAIN").is_none(),
            "keychain required but unavailable: {e}"
        );
        eprintln!("skipping: {e}");
        return;
    }
    let key = SecretKey::new("everything", "personal", "token");
    keychain
        .set(&key, &Secret::new("s3cr3t-value"))
        .expect("set");
    let read = keychain.get(&key).expect("get").expect("present");
    assert_eq!(read.expose(), "s3cr3t-value");
    keychain.delete(&key).expect("delete");
    assert!(keychain.get(&key).expect("get after delete").is_none());
    keychain.delete(&key).expect("deleting twice is fine");
}
