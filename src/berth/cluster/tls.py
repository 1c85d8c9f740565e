"""TLS material for the embedded API server: a private CA and a serving certificate for 127.0.0.1.

Why TLS on loopback: client-go (kubectl, Helm) only sends the kubeconfig's credentials over TLS, so without it
every kubectl request would be anonymous. The CA and certificate are created once per data directory (``DIR/pki``)
and reused on restart, so kubeconfigs handed out earlier stay valid; in-memory clusters get a throw-away set.
EC P-256 keys keep generation in the low milliseconds.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import ssl
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Pki:
    """Paths of the CA certificate, the serving certificate and its key."""

    ca_cert: Path
    cert: Path
    key: Path

    def ca_pem(self) -> bytes:
        return self.ca_cert.read_bytes()

    def server_context(self) -> ssl.SSLContext:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        ctx.load_cert_chain(str(self.cert), str(self.key))
        ctx.set_alpn_protocols(["http/1.1"])
        return ctx

    def client_context(self) -> ssl.SSLContext:
        ctx = ssl.create_default_context(cafile=str(self.ca_cert))
        return ctx


def _name(common: str) -> Any:
    from cryptography import x509
    from cryptography.x509.oid import NameOID

    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])


def _write_private(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)


def generate(directory: Path) -> Pki:
    """Create a CA and a serving certificate (localhost, 127.0.0.1, ::1) in ``directory``."""
    # Imported here: a restart with existing certificates should not pay for loading cryptography.
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID

    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(directory, 0o700)
    now = datetime.datetime.now(datetime.UTC) - datetime.timedelta(minutes=5)
    later = now + datetime.timedelta(days=3650)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_cert = (
        x509.CertificateBuilder()
        .subject_name(_name("berth-ca"))
        .issuer_name(_name("berth-ca"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(later)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                key_cert_sign=True,
                crl_sign=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name("kube-apiserver"))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(later)
        .add_extension(
            x509.SubjectAlternativeName(
                [
                    x509.DNSName("localhost"),
                    x509.DNSName("kubernetes"),
                    x509.DNSName("kubernetes.default.svc"),
                    x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
                    x509.IPAddress(ipaddress.ip_address("::1")),
                ]
            ),
            critical=False,
        )
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    pki = Pki(directory / "ca.crt", directory / "apiserver.crt", directory / "apiserver.key")
    _write_private(pki.ca_cert, ca_cert.public_bytes(serialization.Encoding.PEM))
    _write_private(pki.cert, cert.public_bytes(serialization.Encoding.PEM))
    _write_private(
        pki.key,
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        ),
    )
    return pki


def load_or_generate(directory: Path | None) -> Pki:
    """The PKI in ``directory`` (generated when missing); ``None``: a fresh set in a private temp directory."""
    if directory is None:
        return generate(Path(tempfile.mkdtemp(prefix="berth-pki-")))
    pki = Pki(directory / "ca.crt", directory / "apiserver.crt", directory / "apiserver.key")
    if pki.ca_cert.is_file() and pki.cert.is_file() and pki.key.is_file():
        return pki
    return generate(directory)
