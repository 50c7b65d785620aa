#include <openssl/evp.h>
#include <openssl/sha.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>

// NID_ED25519 reaches Swift only through a macro chain; a typed copy:
static const int MP_EVP_PKEY_ED25519 = EVP_PKEY_ED25519;
