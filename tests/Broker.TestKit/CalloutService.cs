using System.Collections.Concurrent;
using System.Text;
using Broker.Core.Internal.Jwt;
using NATS.Client.Core;
using NATS.NKeys;

namespace Broker.TestKit;

/// <summary>What the test's callout service answers to one request.</summary>
internal abstract record CalloutAnswer
{
    /// <summary>Allows the user into <paramref name="Account"/> (the user JWT's <c>aud</c>); <paramref name="User"/> adjusts the user claims.</summary>
    public sealed record Allow(string Account, Action<UserClaims>? User = null) : CalloutAnswer;

    /// <summary>Refuses with an error in the response.</summary>
    public sealed record Deny(string Error) : CalloutAnswer;

    /// <summary>Answers with an empty message (a refusal without a reason).</summary>
    public sealed record Empty : CalloutAnswer;

    /// <summary>Does not answer.</summary>
    public sealed record Silent : CalloutAnswer;

    /// <summary>
    /// Any response: <paramref name="Response"/> adjusts the response claims after they are filled in (subject, audience,
    /// user JWT into <paramref name="Account"/>), <paramref name="Signer"/> signs it, <paramref name="UserSigner"/> signs
    /// the user JWT (default: the issuer for both).
    /// </summary>
    public sealed record Custom(string Account, Action<AuthorizationResponseClaims>? Response = null, KeyPair? Signer = null, KeyPair? UserSigner = null, Action<UserClaims>? User = null) : CalloutAnswer;
}

/// <summary>
/// An authorization callout service as a user would write one, with NATS.Client.Core and NATS.NKeys: it connects as an
/// auth user, answers <c>$SYS.REQ.USER.AUTH</c> requests (verifying each request's signature by the server key it
/// names, opening sealed ones with its curve key) with a response signed by the issuer, sealed back when the request
/// was. The decision per request is the test's; every request received is kept for the test to inspect.
/// </summary>
internal sealed class CalloutService : IAsyncDisposable
{
    private readonly NatsConnection connection;
    private readonly INatsSub<byte[]> subscription;
    private readonly Task loop;
    private readonly Func<AuthorizationRequestClaims, CalloutAnswer> decide;
    private readonly TimeSpan delay;
    private readonly KeyPair? sealWith;

    private CalloutService(NatsConnection connection, INatsSub<byte[]> subscription, KeyPair issuer, KeyPair? curve, KeyPair? sealWith, Func<AuthorizationRequestClaims, CalloutAnswer> decide, TimeSpan delay)
    {
        this.sealWith = sealWith;
        this.connection = connection;
        this.subscription = subscription;
        Issuer = issuer;
        Curve = curve;
        this.decide = decide;
        this.delay = delay;
        loop = Task.Run(RunAsync);
    }

    public KeyPair Issuer { get; }

    public KeyPair? Curve { get; }

    /// <summary>The requests received, decoded and verified, in order.</summary>
    public ConcurrentQueue<Received> Requests { get; } = new();

    /// <summary>A request as it arrived.</summary>
    public sealed record Received(AuthorizationRequestClaims Claims, string? XKeyHeader, bool Sealed);

    /// <summary>
    /// Connects the service to <paramref name="url"/> as <paramref name="user"/> (password = name; null: no user, for a
    /// service logging in with a JWT through <paramref name="configure"/>) and starts answering.
    /// With <paramref name="curve"/> it opens sealed requests, and seals its replies with <paramref name="sealWith"/>
    /// (default the same key), unless <paramref name="sealReplies"/> is false; <paramref name="configure"/> adjusts its connection.
    /// </summary>
    public static async Task<CalloutService> StartAsync(string url, KeyPair issuer, Func<AuthorizationRequestClaims, CalloutAnswer> decide, string? user = "auth", KeyPair? curve = null, TimeSpan? delay = null, KeyPair? sealWith = null, bool sealReplies = true, Func<NatsOpts, NatsOpts>? configure = null)
    {
        var connection = await NatsClients.ConnectAsync(url, "callout-service", o => (configure ?? (c => c))(user is null ? o : o.WithUser(user, user)));
        var subscription = await connection.SubscribeCoreAsync<byte[]>("$SYS.REQ.USER.AUTH");
        await connection.PingAsync();
        return new CalloutService(connection, subscription, issuer, curve, sealReplies ? sealWith ?? curve : null, decide, delay ?? TimeSpan.Zero);
    }

    public async ValueTask DisposeAsync()
    {
        await subscription.DisposeAsync();
        await connection.DisposeAsync();
        await loop.WaitAsync(TimeSpan.FromSeconds(10));
    }

    private async Task RunAsync()
    {
        await foreach (var message in subscription.Msgs.ReadAllAsync())
        {
            // Answers run side by side, as a service handling many connects would.
            _ = Task.Run(() => AnswerAsync(message));
        }
    }

    private async Task AnswerAsync(NatsMsg<byte[]> message)
    {
        var payload = message.Data ?? [];
        string? serverXKey = null;
        if (message.Headers is { } headers && headers.TryGetValue("Nats-Server-Xkey", out var values))
        {
            serverXKey = values.ToString();
        }

        var wasSealed = !payload.AsSpan().StartsWith("eyJ"u8);
        if (wasSealed)
        {
            payload = Curve!.Open(payload, serverXKey!);
        }

        if (!JwtToken.TryDecode(Encoding.ASCII.GetString(payload), AuthorizationClaimsJsonContext.Default.AuthorizationRequestClaims, out var request, out var error))
        {
            throw new InvalidOperationException("the request did not verify: " + error);
        }

        Requests.Enqueue(new Received(request, serverXKey, wasSealed));
        if (delay > TimeSpan.Zero)
        {
            await Task.Delay(delay);
        }

        var answer = decide(request);
        byte[] reply;
        switch (answer)
        {
            case CalloutAnswer.Silent:
                return;
            case CalloutAnswer.Empty:
                reply = [];
                break;
            case CalloutAnswer.Deny deny:
                reply = Response(request, r => r.Nats.Error = deny.Error, Issuer);
                break;
            case CalloutAnswer.Allow allow:
                reply = Response(request, r => r.Nats.Jwt = UserJwt(request, allow.Account, allow.User, Issuer), Issuer);
                break;
            case CalloutAnswer.Custom custom:
                reply = Response(
                    request,
                    r =>
                    {
                        r.Nats.Jwt = UserJwt(request, custom.Account, custom.User, custom.UserSigner ?? Issuer);
                        custom.Response?.Invoke(r);
                    },
                    custom.Signer ?? Issuer);
                break;
            default:
                throw new InvalidOperationException("unknown answer");
        }

        if (wasSealed && reply.Length > 0 && sealWith is not null)
        {
            reply = sealWith.Seal(reply, serverXKey!);
        }

        await message.ReplyAsync(reply);
    }

    private static string UserJwt(AuthorizationRequestClaims request, string account, Action<UserClaims>? configure, KeyPair signer) =>
        TestJwt.User(signer, request.Nats.UserNkey, claims =>
        {
            claims.Audience = account;
            configure?.Invoke(claims);
        });

    private static byte[] Response(AuthorizationRequestClaims request, Action<AuthorizationResponseClaims> fill, KeyPair signer)
    {
        var response = new AuthorizationResponseClaims { Subject = request.Nats.UserNkey, Audience = request.Nats.Server.Id };
        fill(response);
        return Encoding.ASCII.GetBytes(JwtToken.Encode(response, AuthorizationClaimsJsonContext.Default.AuthorizationResponseClaims, signer, DateTimeOffset.UtcNow));
    }
}
