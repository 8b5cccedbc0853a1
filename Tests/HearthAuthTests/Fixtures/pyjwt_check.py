"""Cross-checks Hearth's tokens with an independent implementation (PyJWT).

  verify TOKEN JWKS_JSON PROJECT      verify a Hearth ID token against the JWKS; print its claims as JSON
  sign ALG PRIVATE_PEM CLAIMS_JSON    sign claims with PyJWT (RS256 or ES256, kid "pyjwt-test"); print the token
"""
import json
import sys

import jwt
from jwt.algorithms import ECAlgorithm, RSAAlgorithm


def verify(token, jwks_json, project):
    jwks = json.loads(jwks_json)
    kid = jwt.get_unverified_header(token)["kid"]
    jwk = next(k for k in jwks["keys"] if k["kid"] == kid)
    key = RSAAlgorithm.from_jwk(json.dumps(jwk)) if jwk["kty"] == "RSA" else ECAlgorithm.from_jwk(json.dumps(jwk))
    claims = jwt.decode(token, key=key, algorithms=[jwk["alg"]], audience=project,
                        issuer="https://securetoken.google.com/" + project, options={"verify_iat": False})
    print(json.dumps(claims))


def sign(alg, pem, claims_json):
    print(jwt.encode(json.loads(claims_json), pem, algorithm=alg, headers={"kid": "pyjwt-test"}))


if __name__ == "__main__":
    command = sys.argv[1]
    if command == "verify":
        verify(sys.argv[2], sys.argv[3], sys.argv[4])
    elif command == "sign":
        sign(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        sys.exit("unknown command " + command)
