import HearthAuth
import HearthModel
import Testing

@Suite("Password hashing")
struct PasswordTests {
    @Test("scrypt matches RFC 7914's test vectors")
    func rfc7914() throws {
        let empty = try Crypto.scrypt(password: [], salt: [], costLog2: 4, blockSize: 1, parallelization: 1, length: 64)
        #expect(Hex.encode(empty) == "77d6576238657b203b19ca42c18a0497f16b4844e3074ae8dfdffa3fede21442fcd0069ded0948f8326a753a0fc81f17e8d3e0fb2e0d3628cf35e20c38d18906")
        let nacl = try Crypto.scrypt(password: Array("password".utf8), salt: Array("NaCl".utf8), costLog2: 10, blockSize: 8, parallelization: 16, length: 64)
        #expect(Hex.encode(nacl) == "fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b3731622eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640")
    }

    @Test("Firebase's modified scrypt verifies the firebase/scrypt README's example and nothing else")
    func firebaseScrypt() {
        let stored = PasswordHash(algorithm: .firebaseScrypt, hash: "lSrfV15cpx95/sZS2W9c9Kp6i/LVgQNDNC/qzrCnh1SAyZvqmZqAjTdn3aoItz+VHjoZilo78198JAdRuid5lQ==",
                                  salt: "42xEC+ixf3L2lw==", costLog2: 14, blockSize: 8,
                                  signerKey: "jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA==", saltSeparator: "Bw==")
        #expect(PasswordHasher.verify("user1password", against: stored))
        #expect(!PasswordHasher.verify("user1passwore", against: stored))
        var otherSeparator = stored
        otherSeparator.saltSeparator = "Bx=="
        #expect(!PasswordHasher.verify("user1password", against: otherSeparator))
    }

    @Test("a new hash has a random salt, verifies its password only, and stored records with bad parameters verify nothing (never trap)")
    func roundTrip() throws {
        let hasher = PasswordHasher(costLog2: 10, blockSize: 8)
        let a = try hasher.hash("hunter22", random: SystemRandom())
        let b = try hasher.hash("hunter22", random: SystemRandom())
        #expect(a.salt != b.salt)
        #expect(a.hash != b.hash)
        #expect(PasswordHasher.verify("hunter22", against: a))
        #expect(!PasswordHasher.verify("hunter23", against: a))
        for bad in [PasswordHash(algorithm: .standardScrypt, hash: a.hash, salt: a.salt, costLog2: 99, blockSize: 8),
                    PasswordHash(algorithm: .standardScrypt, hash: a.hash, salt: a.salt, costLog2: 10, blockSize: -1),
                    PasswordHash(algorithm: .standardScrypt, hash: a.hash, salt: a.salt, costLog2: 20, blockSize: 32, parallelization: 16),
                    PasswordHash(algorithm: .standardScrypt, hash: "not base64!", salt: a.salt, costLog2: 10, blockSize: 8),
                    PasswordHash(algorithm: .standardScrypt, hash: "", salt: a.salt, costLog2: 10, blockSize: 8),
                    PasswordHash(algorithm: .firebaseScrypt, hash: a.hash, salt: a.salt, costLog2: 10, blockSize: 8)] {
            #expect(!PasswordHasher.verify("hunter22", against: bad))
        }
        #expect(throws: CryptoError.self) { try Crypto.scrypt(password: [], salt: [], costLog2: 0, blockSize: 1, parallelization: 1, length: 64) }
        #expect(throws: CryptoError.self) { try Crypto.aes256CTR(key: [1, 2, 3], [0]) }
    }

    @Test("the failed-attempt bucket allows a burst, then one per refill interval")
    func attemptLimiter() {
        let limiter = AttemptLimiter(policy: .init(burst: 2, refill: .seconds(10)))
        let t0 = Timestamp(seconds: 1000)
        #expect(limiter.allows("a", now: t0))
        limiter.recordFailure("a", now: t0)
        limiter.recordFailure("a", now: t0)
        #expect(!limiter.allows("a", now: t0))
        #expect(limiter.allows("b", now: t0))
        #expect(!limiter.allows("a", now: t0 + .seconds(9)))
        #expect(limiter.allows("a", now: t0 + .seconds(10)))
        limiter.recordFailure("a", now: t0 + .seconds(10))
        #expect(!limiter.allows("a", now: t0 + .seconds(10)))
        #expect(limiter.allows("a", now: t0 + .seconds(1_000_000)), "never more than the burst saved up, but it refills")
    }
}
