using Broker.Core.Internal.Auth;

namespace Broker.Core.Tests.Auth;

public class BcryptPasswordTests
{
    // Openwall crypt_blowfish / OpenBSD vectors (cost 5), and vectors made with glibc/libxcrypt crypt(3) for the
    // other prefixes, costs, the 72-byte limit and UTF-8. All were cross-checked with crypt(3) on this machine.
    public static TheoryData<string, string> Vectors => new()
    {
        { "U*U", "$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW" },
        { "U*U*", "$2a$05$CCCCCCCCCCCCCCCCCCCCC.VGOzA784oUp/Z0DY336zx7pLYAy0lwK" },
        { "U*U*U", "$2a$05$XXXXXXXXXXXXXXXXXXXXXOAcXxm9kjPGEMsLznoKqmqw7tc8WCx4a" },
        { "", "$2a$05$CCCCCCCCCCCCCCCCCCCCC.7uG0VCzI2bS7j6ymqJi9CdcdxiRTWNy" },
        {
            "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789chars after 72 are ignored",
            "$2a$05$abcdefghijklmnopqrstuu5s2v8.iXieOjg/.AySBTTZIIVFJeBui"
        },
        { "password", "$2b$04$saltsaltsaltsaltsaltsOh9rCgsOi8IYqmtEm1s6duinLpzU3Bba" },
        { "correct horse battery staple", "$2y$06$0123456789abcdefghijkOM4AcvBlZ1iXUESnYqPvqup.yeWzHrkG" },
        { "nats-secret", "$2x$04$ZYXWVUTSRQPONMLKJIHGFOq9HiLgprK63133UEJGU2W7kAS3ac6bG" },
        { "nats-secret", "$2a$04$ZYXWVUTSRQPONMLKJIHGFOq9HiLgprK63133UEJGU2W7kAS3ac6bG" },
        { new string('a', 71), "$2b$04$abcdefghijklmnopqrstuuMCu.k1vM/ywQwiONaEn3oEMlZoCVBd6" },
        { new string('a', 72), "$2b$04$abcdefghijklmnopqrstuuBzzIgyKkz7xMWYSzkIjUSnxEQFQ0WNe" },
        { "pässwörd€", "$2b$05$aaaaaaaaaaaaaaaaaaaaaOeSZvRwete7iSeDrjY9SsqFNUpLIkGaa" },
        { "pässwörd€", "$2y$05$aaaaaaaaaaaaaaaaaaaaaOeSZvRwete7iSeDrjY9SsqFNUpLIkGaa" },
        { "", "$2b$04$......................w74bL5gU7LSJClZClCa.Pkz14aTv/XO" },
    };

    [Theory]
    [MemberData(nameof(Vectors))]
    public void Verifies_known_vectors(string password, string hash)
    {
        Assert.True(BcryptPassword.IsHash(hash));
        Assert.True(BcryptPassword.Verify(password, hash));
    }

    [Theory]
    [MemberData(nameof(Vectors))]
    public void Rejects_a_different_password(string password, string hash)
    {
        var firstChanged = password.Length == 0 ? "x" : (char)(password[0] ^ 1) + password[1..];
        Assert.False(BcryptPassword.Verify(firstChanged, hash));
        if (System.Text.Encoding.UTF8.GetByteCount(password) < 72)
        {
            Assert.False(BcryptPassword.Verify(password + "x", hash));
        }
    }

    [Fact]
    public void Truncates_passwords_at_72_bytes()
    {
        const string hash72 = "$2b$04$abcdefghijklmnopqrstuuBzzIgyKkz7xMWYSzkIjUSnxEQFQ0WNe";
        Assert.True(BcryptPassword.Verify(new string('a', 73), hash72));
        Assert.True(BcryptPassword.Verify(new string('a', 72) + "b", hash72));
        Assert.False(BcryptPassword.Verify(new string('a', 71), hash72));

        // A multi-byte character straddling the limit: only its bytes before byte 72 count.
        var hash = BCrypt.Net.BCrypt.HashPassword(new string('a', 71) + "é", 4);
        Assert.True(BcryptPassword.Verify(new string('a', 71) + "è", hash)); // é and è share their first UTF-8 byte
        Assert.False(BcryptPassword.Verify(new string('a', 70) + "é", hash));
    }

    // Hashes made by the library (as `nats server passwd` or any bcrypt tool would make them) verify.
    [Theory]
    [InlineData(4)]
    [InlineData(5)]
    [InlineData(6)]
    public void Hashes_round_trip(int cost)
    {
        var hash = BCrypt.Net.BCrypt.HashPassword("s3cr3t", cost);

        Assert.Equal(60, hash.Length);
        Assert.StartsWith($"$2a${cost:D2}$", hash, StringComparison.Ordinal);
        Assert.True(BcryptPassword.IsHash(hash));
        Assert.True(BcryptPassword.Verify("s3cr3t", hash));
        Assert.False(BcryptPassword.Verify("s3cr3T", hash));
        Assert.NotEqual(hash, BCrypt.Net.BCrypt.HashPassword("s3cr3t", cost)); // a fresh salt each time
    }

    [Theory]
    [InlineData("")]
    [InlineData("$2a$05$")]
    [InlineData("$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOe")] // one short
    [InlineData("$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeWW")] // one long
    [InlineData("$2c$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW")] // unknown variant
    [InlineData("$2a$03$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW")] // cost too low
    [InlineData("$2a$32$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW")] // cost too high
    [InlineData("$2a$5x$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW")] // cost not digits
    [InlineData("$2a$05$CCCCCCCCCCCCCCCCCCCC!.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW")] // not bcrypt base64
    [InlineData("$2a$05$CCCCCCCCCCCCCCCCCCCCCé5YPO9kmyuRGyh0XouQYb4YMJKvyOeW")] // not ASCII
    [InlineData("$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeé")] // not ASCII in the hash part
    [InlineData("U*U")]
    public void Malformed_hashes_do_not_verify(string hash) => Assert.False(BcryptPassword.Verify("U*U", hash));

    [Fact]
    public void Null_inputs_do_not_verify()
    {
        Assert.False(BcryptPassword.Verify(null, "$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW"));
        Assert.False(BcryptPassword.Verify("U*U", null));
    }

    [Theory]
    [InlineData("$2a$11$abc", true)]
    [InlineData("$2b$04$", true)]
    [InlineData("$2x$10$", true)]
    [InlineData("$2y$10$", true)]
    [InlineData("$2$10$", false)]
    [InlineData("$2a$1$", false)]
    [InlineData("$3a$10$", false)]
    [InlineData("2a$10$abc", false)]
    [InlineData("plain", false)]
    [InlineData(null, false)]
    public void Detects_hashes_as_nats_server_does(string? value, bool expected) => Assert.Equal(expected, BcryptPassword.IsHash(value));
}
