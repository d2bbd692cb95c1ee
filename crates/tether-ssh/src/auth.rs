//! Authentication on a connection whose host key was accepted: the agent,
//! then each key file in order (a passphrase asked once per key per run),
//! then a password and keyboard-interactive when allowed (never after a
//! changed host key accepted under `StrictHostKeyChecking=no`, whose
//! warning is here too). A key with a certificate (`CertificateFile`, or
//! `KEY-cert.pub` beside an identity file, as OpenSSH loads them; or one
//! the agent holds) logs in with the certificate first, then plainly.

use std::sync::Arc;

use russh::client;
use russh::keys::{Certificate, PrivateKeyWithHashAlg, PublicKey};

use crate::connect::{Checker, ConnectOptions, Target};
use crate::error::SshError;

/// OpenSSH's warning for a changed host key accepted under
/// `StrictHostKeyChecking=no`, on stderr (where `ssh` writes it, whichever
/// front-end connects: it must not be lost in an output format).
pub(crate) fn warn_changed_key(e: &SshError) {
    let bar = "@".repeat(59);
    eprintln!(
        "{bar}\n@    WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!     @\n{bar}\n\
         IT IS POSSIBLE THAT SOMEONE IS DOING SOMETHING NASTY!\n{e}\n\
         StrictHostKeyChecking=no: connecting anyway, with keys only.\n\
         Password authentication is disabled to avoid man-in-the-middle attacks.\n\
         Keyboard-interactive authentication is disabled to avoid man-in-the-middle attacks."
    );
}

/// Keyboard-interactive, answering each prompt with `password` (what
/// OpenSSH's PAM-less servers and most PAM stacks ask for).
async fn keyboard_interactive(
    handle: &mut client::Handle<Checker>,
    user: &str,
    password: &str,
) -> bool {
    use russh::client::KeyboardInteractiveAuthResponse as R;
    let mut reply = handle
        .authenticate_keyboard_interactive_start(user, None)
        .await;
    for _ in 0..4 {
        match reply {
            Ok(R::Success) => return true,
            Ok(R::InfoRequest { prompts, .. }) => {
                let answers = prompts.iter().map(|_| password.to_owned()).collect();
                reply = handle
                    .authenticate_keyboard_interactive_respond(answers)
                    .await;
            }
            _ => return false,
        }
    }
    false
}

/// The certificates to log in with: `CertificateFile`s, then each
/// identity's `-cert.pub` that exists (unreadable ones are passed over,
/// as OpenSSH does).
fn certificates(opts: &ConnectOptions) -> Vec<Certificate> {
    let beside = opts.identities.iter().map(|p| {
        let mut name = p.clone().into_os_string();
        name.push("-cert.pub");
        std::path::PathBuf::from(name)
    });
    opts.certificates
        .iter()
        .cloned()
        .chain(beside)
        .filter_map(|p| russh::keys::load_openssh_certificate(p).ok())
        .collect()
}

pub(crate) async fn authenticate(
    handle: &mut client::Handle<Checker>,
    target: &Target,
    opts: &ConnectOptions,
    passwords: bool,
) -> Result<(), SshError> {
    let how = authenticate_by(handle, target, opts, passwords).await?;
    crate::steps::tell(opts.steps.as_ref(), || {
        format!(
            "{}: authenticated as {} with {how}",
            target.host, target.user
        )
    });
    Ok(())
}

/// Tries each way in turn; the one that worked, in words.
async fn authenticate_by(
    handle: &mut client::Handle<Checker>,
    target: &Target,
    opts: &ConnectOptions,
    passwords: bool,
) -> Result<String, SshError> {
    let mut tried = Vec::new();
    let rsa_hash = handle
        .best_supported_rsa_hash()
        .await
        .ok()
        .flatten()
        .flatten();
    // `PubkeyAcceptedAlgorithms`: a key (or certificate) whose signature
    // the list leaves out is not offered.
    let accepted = opts.pubkey_algorithms.as_deref();
    let rsa_hash = crate::pubkey_algorithms::rsa_hash(accepted, rsa_hash);
    let allows = |alg: &russh::keys::Algorithm, cert: bool| {
        crate::pubkey_algorithms::allows(accepted, alg, rsa_hash, cert)
    };
    let certs: Vec<Certificate> = certificates(opts)
        .into_iter()
        .filter(|c| allows(&c.algorithm(), true))
        .collect();
    let mut wanted: Vec<PublicKey> = opts
        .identities
        .iter()
        .filter_map(|p| russh::keys::load_public_key(p.with_extension("pub")).ok())
        .collect();
    wanted.extend(
        certs
            .iter()
            .map(|c| PublicKey::from(c.public_key().clone())),
    );
    let certs_of = |key: &PublicKey| -> Vec<Certificate> {
        certs
            .iter()
            .filter(|c| c.public_key() == key.key_data())
            .cloned()
            .collect()
    };
    if let Some(sock) = &opts.agent
        && let Ok(mut agent) = russh::keys::agent::client::AgentClient::connect_uds(sock).await
    {
        tried.push("agent");
        let ids = agent.request_identities().await.unwrap_or_default();
        for id in ids {
            let key = match id {
                russh::keys::agent::AgentIdentity::PublicKey { key, .. } => key,
                russh::keys::agent::AgentIdentity::Certificate { certificate, .. } => {
                    let key = PublicKey::from(certificate.public_key().clone());
                    let certificate_id = certificate.key_id().to_owned();
                    if !allows(&certificate.algorithm(), true) {
                        continue;
                    }
                    if opts.identities_only
                        && !wanted.iter().any(|w| w.key_data() == key.key_data())
                    {
                        continue;
                    }
                    let r = handle
                        .authenticate_certificate_with(
                            &target.user,
                            certificate,
                            rsa_hash,
                            &mut agent,
                        )
                        .await;
                    if r.is_ok_and(|r| r.success()) {
                        return Ok(format!("the agent's certificate {certificate_id:?}"));
                    }
                    continue;
                }
            };
            if opts.identities_only && !wanted.iter().any(|w| w.key_data() == key.key_data()) {
                continue;
            }
            for cert in certs_of(&key) {
                tried.push("certificate");
                let r = handle
                    .authenticate_certificate_with(&target.user, cert, rsa_hash, &mut agent)
                    .await;
                if r.is_ok_and(|r| r.success()) {
                    return Ok("a certificate with the agent's key".into());
                }
            }
            if !allows(&key.algorithm(), false) {
                continue;
            }
            let fp = key.fingerprint(russh::keys::HashAlg::Sha256);
            let r = handle
                .authenticate_publickey_with(&target.user, key, rsa_hash, &mut agent)
                .await;
            if r.is_ok_and(|r| r.success()) {
                return Ok(format!("the agent's key {fp}"));
            }
        }
    }
    for path in &opts.identities {
        let key = match russh::keys::load_secret_key(path, None) {
            Ok(k) => Arc::new(k),
            Err(russh::keys::Error::KeyIsEncrypted) => {
                // Asked once per run; the decrypted key serves every host.
                let secrets = opts.secrets.clone();
                let path = path.clone();
                let ask = tokio::task::spawn_blocking(move || secrets.and_then(|s| s.key(&path)));
                match ask.await.ok().flatten() {
                    Some(k) => k,
                    None => continue,
                }
            }
            Err(_) => continue,
        };
        for cert in certs_of(&key.public_key().clone()) {
            tried.push("certificate");
            let r = handle
                .authenticate_openssh_cert(&target.user, Arc::clone(&key), cert)
                .await;
            if r.is_ok_and(|r| r.success()) {
                return Ok(format!("a certificate with the key {}", path.display()));
            }
        }
        if !allows(&key.algorithm(), false) {
            continue;
        }
        tried.push("key file");
        let key = PrivateKeyWithHashAlg::new(key, rsa_hash);
        let r = handle.authenticate_publickey(&target.user, key).await;
        if r.is_ok_and(|r| r.success()) {
            return Ok(format!("the key {}", path.display()));
        }
    }
    if passwords && let Some(secrets) = opts.secrets.clone() {
        let (user, host) = (target.user.clone(), target.host.clone());
        let ask = tokio::task::spawn_blocking(move || secrets.password(&user, &host));
        if let Some(password) = ask.await.ok().flatten() {
            tried.push("password");
            let r = handle
                .authenticate_password(&target.user, password.clone())
                .await;
            if r.is_ok_and(|r| r.success()) {
                return Ok("a password".into());
            }
            tried.push("keyboard-interactive");
            if keyboard_interactive(handle, &target.user, &password).await {
                return Ok("keyboard-interactive".into());
            }
        }
    }
    tried.dedup();
    Err(SshError::Auth {
        host: target.host.clone(),
        user: target.user.clone(),
        tried: if tried.is_empty() {
            "nothing: no agent and no readable key".into()
        } else {
            tried.join(", ")
        },
    })
}
