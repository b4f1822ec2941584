using System.Buffers.Text;
using System.Text;
using Broker.Core.Auth;
using Broker.Core.Internal.Auth;
using NATS.NKeys;

namespace Broker.Core.Tests.Auth;

/// <summary>NKey users: the INFO nonce, the signature check, and nats-server's reasons and validation texts.</summary>
public class NkeyAuthenticationTests
{
    private static readonly KeyPair Alice = KeyPair.CreatePair(PrefixByte.User);
    private static readonly KeyPair Mallory = KeyPair.CreatePair(PrefixByte.User);

    [Fact]
    public void Nonces_are_fifteen_base64url_characters_and_fresh_each_time()
    {
        var nonces = Enumerable.Range(0, 100).Select(_ => Authenticator.CreateNonce()).ToList();
        Assert.All(nonces, n => Assert.Matches("^[A-Za-z0-9_-]{15}$", n));
        Assert.Equal(nonces.Count, nonces.Distinct().Count());
    }

    [Fact]
    public void The_holder_of_the_seed_authenticates_with_a_signature_of_the_nonce()
    {
        var auth = Create(new UserOptions { Nkey = Alice.GetPublicKey(), Permissions = new PermissionsOptions { Publish = new() { Allow = ["a.>"] } } });
        var nonce = Nonce();

        Assert.True(auth.AuthRequired);
        Assert.True(auth.NonceRequired);
        var user = auth.AuthenticateNkey(Alice.GetPublicKey(), Sign(Alice, nonce), nonce, out var failure);

        Assert.NotNull(user);
        Assert.Null(failure);
        Assert.Equal(Alice.GetPublicKey(), user.Name);
        Assert.NotNull(user.Permissions);

        // Standard base64 is accepted too, as nats-server falls back to it.
        Assert.NotNull(auth.AuthenticateNkey(Alice.GetPublicKey(), Convert.ToBase64String(SignBytes(Alice, nonce)), nonce, out _));
    }

    [Fact]
    public void Refusals_say_why_in_nats_server_words()
    {
        var auth = Create(new UserOptions { Nkey = Alice.GetPublicKey() });
        var nonce = Nonce();

        Assert.Null(auth.AuthenticateNkey(Alice.GetPublicKey(), null, nonce, out var missing));
        Assert.Equal("Signature missing", missing);
        Assert.Null(auth.AuthenticateNkey(Alice.GetPublicKey(), "not base64 at all!", nonce, out var notBase64));
        Assert.Equal("Signature not valid base64", notBase64);
        Assert.Null(auth.AuthenticateNkey(Alice.GetPublicKey(), Sign(Mallory, nonce), nonce, out var forged));
        Assert.Equal("Signature not verified", forged);
        Assert.Null(auth.AuthenticateNkey(Alice.GetPublicKey(), Sign(Alice, Nonce()), nonce, out var otherNonce));
        Assert.Equal("Signature not verified", otherNonce);
        Assert.Null(auth.AuthenticateNkey(Alice.GetPublicKey(), "AAAA", nonce, out var tooShort));
        Assert.Equal("Signature not verified", tooShort);

        // A key nobody configured is simply refused.
        Assert.Null(auth.AuthenticateNkey(Mallory.GetPublicKey(), Sign(Mallory, nonce), nonce, out var unknown));
        Assert.Null(unknown);
    }

    [Fact]
    public void Nkey_and_password_users_live_side_by_side()
    {
        var auth = Create(new UserOptions { Nkey = Alice.GetPublicKey() }, new UserOptions { User = "bob", Password = "pw" });

        Assert.True(auth.ChecksNkey(Alice.GetPublicKey()));
        Assert.False(auth.ChecksNkey(null));
        Assert.Equal("bob", auth.Authenticate("bob", "pw", null)?.Name);
        Assert.Null(auth.Authenticate(Alice.GetPublicKey(), null, null));
        Assert.Equal(Alice.GetPublicKey(), auth.ReauthenticateNkey(Alice.GetPublicKey())?.Name);
        Assert.Null(auth.ReauthenticateNkey(Mallory.GetPublicKey()));
    }

    [Fact]
    public void Without_nkey_users_there_is_no_nonce_and_no_nkey_check()
    {
        var auth = Create(new UserOptions { User = "bob", Password = "pw" });
        Assert.False(auth.NonceRequired);
        Assert.False(auth.ChecksNkey(Alice.GetPublicKey()));
    }

    public static TheoryData<string> NotUserKeys => new()
    {
        "UABC",
        Alice.GetPublicKey()[..^1] + (Alice.GetPublicKey()[^1] == 'A' ? 'B' : 'A'), // a bad checksum
        KeyPair.CreatePair(PrefixByte.Account).GetPublicKey(),
        Alice.GetSeed(),
    };

    [Theory]
    [MemberData(nameof(NotUserKeys))]
    public void Keys_that_are_not_public_user_keys_are_refused_as_nats_server_refuses_them(string key)
    {
        var options = new AuthorizationOptions { Users = [new UserOptions { Nkey = key }] };
        Assert.Contains("Not a valid public nkey for a user", Assert.Throws<InvalidOperationException>(options.Validate).Message, StringComparison.Ordinal);
    }

    [Fact]
    public void An_nkey_user_takes_no_name_or_password_and_appears_once()
    {
        var named = new AuthorizationOptions { Users = [new UserOptions { Nkey = Alice.GetPublicKey(), User = "alice" }] };
        Assert.Contains("Nkey users do not take usernames or passwords", Assert.Throws<InvalidOperationException>(named.Validate).Message, StringComparison.Ordinal);

        var twice = new AuthorizationOptions { Users = [new UserOptions { Nkey = Alice.GetPublicKey() }, new UserOptions { Nkey = Alice.GetPublicKey() }] };
        Assert.Contains($"Duplicate nkey \"{Alice.GetPublicKey()}\" detected", Assert.Throws<InvalidOperationException>(twice.Validate).Message, StringComparison.Ordinal);
    }

    private static Authenticator Create(params UserOptions[] users) => new(new AuthorizationOptions { Users = [.. users] });

    private static byte[] Nonce() => Encoding.ASCII.GetBytes(Authenticator.CreateNonce());

    private static byte[] SignBytes(KeyPair key, byte[] nonce)
    {
        var signature = new byte[64];
        key.Sign(nonce, signature);
        return signature;
    }

    private static string Sign(KeyPair key, byte[] nonce) => Base64Url.EncodeToString(SignBytes(key, nonce));
}
