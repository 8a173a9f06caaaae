/* tls_system_store.c — the system's trusted root certificates, for a
 * client given no ZLINK_TLS_CA: Windows' ROOT store, or the first CA
 * bundle found among the usual places elsewhere. */
#include "tls_internal.h"

#if defined(_WIN32)
#include <windows.h>
/* wincrypt.h needs windows.h first. */
#include <wincrypt.h>

int zl_tls_load_system_store(mbedtls_x509_crt *ca)
{
    HCERTSTORE store = CertOpenSystemStoreA(0, "ROOT");
    if (!store)
        return -1;
    int loaded = 0;
    PCCERT_CONTEXT cert = NULL;
    while ((cert = CertEnumCertificatesInStore(store, cert)) != NULL) {
        /* Roots mbedTLS cannot parse (unusual algorithms) are skipped. */
        if (cert->dwCertEncodingType == X509_ASN_ENCODING &&
            mbedtls_x509_crt_parse_der(ca, cert->pbCertEncoded,
                                       cert->cbCertEncoded) == 0)
            loaded++;
    }
    CertCloseStore(store, 0);
    return loaded > 0 ? 0 : -1;
}

#else

/* Debian and Ubuntu, Fedora and RHEL, Alpine, the BSDs and macOS (where
 * Homebrew and MacPorts keep one). */
static const char *const bundles[] = {
    "/etc/ssl/certs/ca-certificates.crt",
    "/etc/pki/tls/certs/ca-bundle.crt",
    "/etc/ssl/cert.pem",
    "/usr/local/etc/ssl/cert.pem",
    "/opt/homebrew/etc/ca-certificates/cert.pem",
};

int zl_tls_load_system_store(mbedtls_x509_crt *ca)
{
    for (size_t i = 0; i < sizeof bundles / sizeof bundles[0]; i++) {
        /* A positive count means some certificates were skipped: the
         * rest still serve. */
        if (mbedtls_x509_crt_parse_file(ca, bundles[i]) >= 0 &&
            ca->raw.p != NULL)
            return 0;
    }
    return -1;
}

#endif
