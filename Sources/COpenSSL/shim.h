#ifndef HEARTH_COPENSSL_SHIM_H
#define HEARTH_COPENSSL_SHIM_H
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/core_names.h>
#include <openssl/param_build.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>
#include <openssl/sha.h>
#include <openssl/hmac.h>
#include <openssl/x509.h>

/* EVP_PKEY_PUBLIC_KEY combines several selection macros and does not import into Swift. */
static const int HEARTH_EVP_PKEY_PUBLIC_KEY = EVP_PKEY_PUBLIC_KEY;
#endif
