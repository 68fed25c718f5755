//! Native TLS (rustls): the acceptor built from `--tls-cert` / `--tls-key`.

use std::io;
use std::path::Path;
use std::sync::Arc;

use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::ServerConfig;

/// Builds a TLS acceptor from a PEM certificate chain and a PEM private key;
/// the error names the file and what is wrong with it.
pub fn acceptor(cert: &Path, key: &Path) -> io::Result<TlsAcceptor> {
    let invalid = |what: &Path, e: &dyn std::fmt::Display| {
        io::Error::new(io::ErrorKind::InvalidInput, format!("{}: {e}", what.display()))
    };
    let chain = CertificateDer::pem_file_iter(cert)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|e| invalid(cert, &e))?;
    if chain.is_empty() {
        return Err(invalid(cert, &"no certificate in the file"));
    }
    let key_der = PrivateKeyDer::from_pem_file(key).map_err(|e| invalid(key, &e))?;
    let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
    let config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| invalid(cert, &e))?
        .with_no_client_auth()
        .with_single_cert(chain, key_der)
        .map_err(|e| invalid(key, &e))?;
    Ok(TlsAcceptor::from(Arc::new(config)))
}
