//! A throwaway private CA and a server certificate it signed, for `wss://` tests.

use std::path::PathBuf;
use std::sync::Arc;

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair};
use tokio_tungstenite::Connector;

/// PEM files in a fresh temporary directory (removed on drop): a CA, and a
/// certificate for `localhost` and `127.0.0.1` signed by it, with its key.
pub struct TestPki {
    dir: PathBuf,
    /// The CA certificate, for `--ca-cert`.
    pub ca: PathBuf,
    /// The server's certificate, for `--tls-cert`.
    pub cert: PathBuf,
    /// The server's private key, for `--tls-key`.
    pub key: PathBuf,
    ca_der: rustls::pki_types::CertificateDer<'static>,
}

impl TestPki {
    /// Generates the CA and the server certificate and writes the files.
    pub fn generate() -> TestPki {
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params.distinguished_name.push(DnType::CommonName, "tictactoe test CA");
        let ca_key = KeyPair::generate().expect("CA key");
        let ca = ca_params.self_signed(&ca_key).expect("CA certificate");
        let params =
            CertificateParams::new(vec!["localhost".to_owned(), "127.0.0.1".to_owned()]).expect("params");
        let key = KeyPair::generate().expect("server key");
        let cert = params.signed_by(&key, &ca, &ca_key).expect("server certificate");

        let dir =
            std::env::temp_dir().join(format!("ttt-pki-{}-{:x}", std::process::id(), rand::random::<u64>()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let write = |name: &str, text: &str| {
            let path = dir.join(name);
            std::fs::write(&path, text).expect("write PEM");
            path
        };
        TestPki {
            ca: write("ca.pem", &ca.pem()),
            cert: write("cert.pem", &cert.pem()),
            key: write("key.pem", &key.serialize_pem()),
            ca_der: ca.der().clone(),
            dir,
        }
    }

    /// A client-side TLS set-up that trusts this CA only.
    pub fn connector(&self) -> Connector {
        let mut roots = rustls::RootCertStore::empty();
        roots.add(self.ca_der.clone()).expect("the CA certificate parses");
        let config = rustls::ClientConfig::builder().with_root_certificates(roots).with_no_client_auth();
        Connector::Rustls(Arc::new(config))
    }
}

impl Drop for TestPki {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
