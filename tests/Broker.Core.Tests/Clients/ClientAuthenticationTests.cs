using System.Buffers.Text;
using System.Text;
using Broker.Abstractions;
using Broker.Core.Auth;
using Broker.Core.Internal.Auth;
using Broker.Core.Internal.Clients;
using Broker.Core.Internal.Protocol;
using NATS.NKeys;

namespace Broker.Core.Tests.Clients;

/// <summary>One connection's authentication: credentials from CONNECT or the transport, the NKey nonce, the deadline, and a reload.</summary>
public sealed class ClientAuthenticationTests
{
    private static readonly KeyPair Alice = KeyPair.CreatePair(PrefixByte.User);

    [Fact]
    public void Without_required_authentication_a_connection_starts_authenticated_and_has_no_deadline()
    {
        using var authentication = new ClientAuthentication(required: false, tls: null);
        var expired = false;
        authentication.StartDeadline(new AuthorizationOptions { Timeout = TimeSpan.FromMilliseconds(1) }, () => expired = true);

        Assert.True(authentication.IsAuthenticated);
        Thread.Sleep(50);
        Assert.False(expired);
    }

    [Fact(Timeout = 30_000)]
    public async Task The_deadline_expires_for_a_connection_that_does_not_authenticate()
    {
        using var authentication = new ClientAuthentication(required: true, tls: null);
        var expired = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        authentication.StartDeadline(new AuthorizationOptions { Timeout = TimeSpan.FromMilliseconds(20) }, () => expired.TrySetResult());

        await expired.Task.WaitAsync(TimeSpan.FromSeconds(20));
        Assert.False(authentication.IsAuthenticated);
    }

    [Fact(Timeout = 30_000)]
    public async Task Authenticating_in_time_stops_the_deadline()
    {
        using var authentication = new ClientAuthentication(required: true, tls: null);
        var expired = 0;
        authentication.StartDeadline(new AuthorizationOptions { Timeout = TimeSpan.FromMilliseconds(200) }, () => Interlocked.Increment(ref expired));
        authentication.Complete();

        await Task.Delay(500);
        Assert.True(authentication.IsAuthenticated);
        Assert.Equal(0, Volatile.Read(ref expired));
    }

    [Fact]
    public void The_default_deadline_with_tls_is_the_handshake_timeout_plus_a_second()
    {
        var tls = new FakeTls { HandshakeTimeout = TimeSpan.FromSeconds(3) };
        using var withTls = new ClientAuthentication(required: true, tls);
        using var clear = new ClientAuthentication(required: true, tls: null);

        Assert.Equal(TimeSpan.FromSeconds(4), withTls.Deadline(new AuthorizationOptions()));
        Assert.Equal(TimeSpan.FromSeconds(7), withTls.Deadline(new AuthorizationOptions { Timeout = TimeSpan.FromSeconds(7) }));
        Assert.Equal(TimeSpan.FromSeconds(2), clear.Deadline(new AuthorizationOptions()));
    }

    [Fact]
    public void Connect_credentials_are_checked_and_empty_ones_taken_from_the_transport()
    {
        var authenticator = Users(("alice", "secret"));
        using var authentication = new ClientAuthentication(required: true, tls: null);

        Assert.Null(authentication.Authenticate(authenticator, Connect("""{"user":"alice","pass":"wrong"}"""), null, out _, out _));
        var user = authentication.Authenticate(authenticator, Connect("""{"user":"alice"}"""), new TransportCredentials { Password = "secret" }, out var failure, out var ignored);

        Assert.Equal("alice", user?.Name);
        Assert.Null(failure);
        Assert.False(ignored);
        Assert.Null(authentication.CreateNonce(authenticator));
    }

    [Fact]
    public void A_reload_keeps_the_user_while_the_credentials_stay_valid()
    {
        var before = Users(("alice", "secret"));
        using var authentication = new ClientAuthentication(required: true, tls: null);
        Assert.NotNull(authentication.Authenticate(before, Connect("""{"user":"alice","pass":"secret"}"""), null, out _, out _));
        authentication.Complete();

        Assert.Equal("alice", authentication.Reauthenticate(before, Users(("alice", "secret"), ("bob", "x")))?.Name);
        Assert.Null(authentication.Reauthenticate(before, Users(("alice", "changed"))));
    }

    [Fact]
    public void An_nkey_user_signs_the_nonce_of_its_own_info_and_stays_while_its_key_is_configured()
    {
        var authenticator = new Authenticator(new AuthorizationOptions { Users = [new UserOptions { Nkey = Alice.GetPublicKey() }] });
        using var authentication = new ClientAuthentication(required: true, tls: null);
        var nonce = authentication.CreateNonce(authenticator);
        Assert.NotNull(nonce);

        var otherNonce = Encoding.ASCII.GetBytes(Authenticator.CreateNonce());
        Assert.Null(authentication.Authenticate(authenticator, NkeyConnect(Sign(otherNonce)), null, out var failure, out _));
        Assert.Equal("Signature not verified", failure);

        var user = authentication.Authenticate(authenticator, NkeyConnect(Sign(Encoding.ASCII.GetBytes(nonce))), null, out failure, out _);
        Assert.Equal(Alice.GetPublicKey(), user?.Name);
        Assert.Null(failure);

        Assert.NotNull(authentication.Reauthenticate(authenticator, authenticator));
        Assert.Null(authentication.Reauthenticate(authenticator, Users(("alice", "secret"))));
    }

    private static Authenticator Users(params (string User, string Password)[] users) =>
        new(new AuthorizationOptions { Users = [.. users.Select(u => new UserOptions { User = u.User, Password = u.Password })] });

    private static ConnectMessage Connect(string json) => ConnectMessage.TryParse(Encoding.UTF8.GetBytes(json)) ?? throw new InvalidOperationException(json);

    private static ConnectMessage NkeyConnect(string signature) => Connect($$"""{"nkey":"{{Alice.GetPublicKey()}}","sig":"{{signature}}"}""");

    private static string Sign(byte[] nonce)
    {
        var signature = new byte[64];
        Alice.Sign(nonce, signature);
        return Base64Url.EncodeToString(signature);
    }
}
