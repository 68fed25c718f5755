//! Whom `wss://` and `https://` trust: a private CA named by `--ca-cert`,
//! else the public web PKI.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use rustls_pki_types::CertificateDer;
use rustls_pki_types::pem::PemObject;
use tokio_tungstenite::Connector;

/// The TLS set-up for `wss://` when `--ca-cert` names a private CA; without
/// it, `wss://` trusts the public web PKI (webpki roots).
static CONNECTOR: OnceLock<Connector> = OnceLock::new();

/// Why the CA file of `--ca-cert` cannot be trusted.
#[derive(Debug, thiserror::Error)]
pub enum CaError {
    /// The file cannot be read as PEM certificates.
    #[error("--ca-cert {}: {error}", path.display())]
    Unreadable {
        path: PathBuf,
        /// What is wrong with it.
        error: rustls_pki_types::pem::Error,
    },
    /// The file holds no certificate.
    #[error("--ca-cert {}: no certificate in the file", path.display())]
    Empty { path: PathBuf },
    /// rustls refused a certificate or the configuration.
    #[error("--ca-cert {}: {error}", path.display())]
    Refused { path: PathBuf, error: rustls::Error },
}

/// Why no TLS configuration could be built for `https://`.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct TlsError(#[from] rustls::Error);

impl From<TlsError> for String {
    fn from(e: TlsError) -> String {
        e.to_string()
    }
}

/// Trusts only the CA certificate(s) in the PEM file at `path` for `wss://`.
pub fn trust_ca(path: &Path) -> Result<(), CaError> {
    let refused = |error| CaError::Refused { path: path.to_owned(), error };
    let certs = CertificateDer::pem_file_iter(path)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|error| CaError::Unreadable { path: path.to_owned(), error })?;
    if certs.is_empty() {
        return Err(CaError::Empty { path: path.to_owned() });
    }
    let mut roots = rustls::RootCertStore::empty();
    for cert in certs {
        roots.add(cert).map_err(refused)?;
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(refused)?
        .with_root_certificates(roots)
        .with_no_client_auth();
    let _ = CONNECTOR.set(Connector::Rustls(Arc::new(config)));
    Ok(())
}

/// The TLS client configuration for `https://` API calls: the private CA of
/// `--ca-cert` if given, else the public web PKI.
pub fn tls_config() -> Result<rustls::ClientConfig, TlsError> {
    if let Some(Connector::Rustls(config)) = CONNECTOR.get() {
        return Ok((**config).clone());
    }
    let roots = rustls::RootCertStore { roots: webpki_roots::TLS_SERVER_ROOTS.to_vec() };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    Ok(rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_root_certificates(roots)
        .with_no_client_auth())
}

/// The connector for `wss://`: the private CA's, if one was trusted.
pub fn connector() -> Option<Connector> {
    CONNECTOR.get().cloned()
}
