using System.Buffers;
using System.Text;
using System.Text.Encodings.Web;
using System.Text.Json;
using Broker.Abstractions;
using Broker.Core.Internal.Accounts;
using Broker.Core.Internal.Accounts.Resolvers;
using Broker.Core.Internal.Jwt;
using Microsoft.Extensions.Logging;

namespace Broker.Core.Internal.Events;

/// <summary>
/// The account resolver's requests in the system account, as nats-server 2.9.10 subscribes them for its resolver
/// (accounts.go <c>DirAccResolver.Start</c>, <c>CacheDirAccResolver.Start</c>; events.go <c>accountClaimUpdate</c>
/// for <c>MEMORY</c>): <c>$SYS.REQ.ACCOUNT.&lt;acc&gt;.CLAIMS.UPDATE</c> and its old form
/// <c>$SYS.ACCOUNT.&lt;acc&gt;.CLAIMS.UPDATE</c>; with a nats-based resolver also <c>$SYS.REQ.CLAIMS.UPDATE</c>,
/// <c>.LIST</c> and <c>.DELETE</c>; with the full one <c>$SYS.REQ.ACCOUNT.&lt;acc&gt;.CLAIMS.LOOKUP</c> and
/// <c>$SYS.REQ.CLAIMS.PACK</c>. Requests are handled one at a time, in arrival order, off the publisher's thread:
/// an update may close the very connection that sent it. An update an account takes is answered once the plugins
/// applied it (the account's JetStream).
/// </summary>
internal sealed partial class ClaimsRequests
{
    private static readonly JsonWriterOptions WriterOptions = new() { Encoder = JavaScriptEncoder.UnsafeRelaxedJsonEscaping };

    private readonly JwtAccounts accounts;
    private readonly IBusClient client;
    private readonly SystemServerInfo server;
    private readonly ILogger logger;
    private readonly DirResolver? dir;
    private readonly Lock queueLock = new();
    private Task tail = Task.CompletedTask;

    // The request being handled: its answers, sent once the account changes it made are applied (one request at a time).
    private readonly List<(string Subject, byte[] Payload)> answers = [];
    private readonly List<Task> changes = [];

    public ClaimsRequests(JwtAccounts accounts, IBusClient client, SystemServerInfo server, ILogger logger)
    {
        this.accounts = accounts;
        this.client = client;
        this.server = server;
        this.logger = logger;
        dir = accounts.Resolver as DirResolver;
    }

    /// <summary>Subscribes the system client to the requests the configured resolver answers.</summary>
    public List<IBusSubscription> Subscribe()
    {
        var subscriptions = new List<IBusSubscription>();
        void On(string subject, string? queue, Action<Request> handle) =>
            subscriptions.Add(client.Subscribe(subject, queue, (in BusMessage m) => Enqueue(handle, Copy(m))));

        if (dir is null)
        {
            On("$SYS.ACCOUNT.*.CLAIMS.UPDATE", null, MemoryUpdate);
            On("$SYS.REQ.ACCOUNT.*.CLAIMS.UPDATE", null, MemoryUpdate);
            return subscriptions;
        }

        On("$SYS.ACCOUNT.*.CLAIMS.UPDATE", null, AccountUpdate);
        On("$SYS.REQ.ACCOUNT.*.CLAIMS.UPDATE", null, AccountUpdate);
        On("$SYS.REQ.CLAIMS.UPDATE", null, Update);
        if (!dir.IsCache)
        {
            On("$SYS.REQ.ACCOUNT.*.CLAIMS.LOOKUP", null, Lookup);
            On("$SYS.REQ.CLAIMS.PACK", "responder", Pack);
        }

        On("$SYS.REQ.CLAIMS.LIST", null, List);
        On("$SYS.REQ.CLAIMS.DELETE", null, Delete);
        return subscriptions;
    }

    /// <summary>Waits for the requests already queued (the broker stopping).</summary>
    public Task DrainAsync()
    {
        lock (queueLock)
        {
            return tail;
        }
    }

    private static Request Copy(in BusMessage message) =>
        new(Encoding.UTF8.GetString(message.Subject), Encoding.UTF8.GetString(message.ReplyTo), Encoding.UTF8.GetString(message.Payload.ToArray()));

    private void Enqueue(Action<Request> handle, Request request)
    {
        lock (queueLock)
        {
            tail = HandleAfterAsync(tail, handle, request);
        }
    }

    /// <summary>
    /// Handles a request after the previous one, then sends its answers once the plugins applied the account changes it
    /// made (an account's JetStream enabled by the update is there when the answer arrives, as in nats-server, which
    /// updates the account before it answers), waiting at most <see cref="AccountDirectory.SettleLimit"/>.
    /// </summary>
    private async Task HandleAfterAsync(Task previous, Action<Request> handle, Request request)
    {
        // Off the publisher's thread, after the previous request (whose failure was logged).
        await previous.ConfigureAwait(ConfigureAwaitOptions.ForceYielding | ConfigureAwaitOptions.SuppressThrowing);
        try
        {
            handle(request);
        }
#pragma warning disable CA1031 // A failing request must not stop the ones after it.
        catch (Exception ex)
#pragma warning restore CA1031
        {
            ClaimsLog.RequestFailed(logger, request.Subject, ex);
        }

        foreach (var change in changes)
        {
            await AccountDirectory.WaitAsync(change, CancellationToken.None).ConfigureAwait(false);
        }

        changes.Clear();
        foreach (var (subject, payload) in answers)
        {
            client.Publish(Encoding.UTF8.GetBytes(subject), default, ReadOnlySequence<byte>.Empty, new ReadOnlySequence<byte>(payload));
        }

        answers.Clear();
    }

    /// <summary>Notes that the request changed the account <paramref name="key"/>: its answers wait until the plugins applied it.</summary>
    private void Changed(string key)
    {
        if (accounts.Settling(key) is { } settling)
        {
            changes.Add(settling);
        }
    }

    // The account of $SYS.REQ.ACCOUNT.<acc>.CLAIMS.UPDATE (6 tokens) or $SYS.ACCOUNT.<acc>.CLAIMS.UPDATE (5).
    private static string? AccountOf(string subject)
    {
        var tokens = subject.Split('.');
        return tokens.Length switch
        {
            6 => tokens[3],
            5 => tokens[2],
            _ => null,
        };
    }

    /// <summary>nats-server <c>accountClaimUpdate</c> (MEMORY): only an account in use takes the update; nothing is stored.</summary>
    private void MemoryUpdate(Request request)
    {
        if (AccountOf(request.Subject) is not { } key)
        {
            return;
        }

        if (request.Body.Length == 0)
        {
            Respond(request.Reply, key, "jwt update error", "request body is empty");
        }
        else if (!JwtToken.TryDecodeAccount(request.Body, out var claims, out var error))
        {
            Respond(request.Reply, key, "jwt update resulted in error", error);
        }
        else if (claims.Subject != key)
        {
            Respond(request.Reply, key, "jwt update resulted in error", "subject does not match jwt content");
        }
        else
        {
            switch (accounts.Update(key, request.Body, out error))
            {
                case ClaimsUpdateOutcome.NotRegistered:
                    Respond(request.Reply, key, "jwt update skipped", null);
                    break;
                case ClaimsUpdateOutcome.Failed:
                    Respond(request.Reply, key, "jwt update resulted in error", error);
                    break;
                case ClaimsUpdateOutcome.Applied:
                    Changed(key);
                    Respond(request.Reply, key, "jwt updated", null);
                    break;
                default:
                    Respond(request.Reply, key, "jwt updated", null);
                    break;
            }
        }
    }

    /// <summary>The nats-based resolvers' <c>$SYS.REQ.ACCOUNT.&lt;acc&gt;.CLAIMS.UPDATE</c>.</summary>
    private void AccountUpdate(Request request)
    {
        if (AccountOf(request.Subject) is not { } key)
        {
            return;
        }

        var cache = dir!.IsCache;
        var failed = cache ? "jwt update cache resulted in error" : "jwt update resulted in error";
        if (!JwtToken.TryDecodeAccount(request.Body, out var claims, out var error))
        {
            Respond(request.Reply, cache ? key : "n/a", failed, error);
        }
        else if (cache)
        {
            if (claims.Subject != key)
            {
                Respond(request.Reply, key, failed, "subject does not match jwt content");
            }
            else
            {
                Store(request.Reply, key, request.Body, claims);
            }
        }
        else if (Validate(claims, request.Body) is { } invalid)
        {
            Respond(request.Reply, claims.Subject, "jwt validation failed", invalid);
        }
        else if (claims.Subject != key)
        {
            Respond(request.Reply, key, failed, "subject does not match jwt content");
        }
        else
        {
            Store(request.Reply, key, request.Body, claims);
        }
    }

    /// <summary>The nats-based resolvers' <c>$SYS.REQ.CLAIMS.UPDATE</c>: the account is the JWT's subject.</summary>
    private void Update(Request request)
    {
        var failed = dir!.IsCache ? "jwt update cache resulted in error" : "jwt update resulted in error";
        if (!JwtToken.TryDecodeAccount(request.Body, out var claims, out var error))
        {
            Respond(request.Reply, "n/a", failed, error);
            return;
        }

        Store(request.Reply, claims.Subject!, request.Body, claims);
    }

    // The checks after decoding, in nats-server's order for each resolver, then the write and the live update.
    private void Store(string reply, string key, string token, AccountClaims claims)
    {
        var cache = dir!.IsCache;
        var failed = cache ? "jwt update cache resulted in error" : "jwt update resulted in error";
        if (claims.Issuer == accounts.FirstOperator && accounts.StrictSigningKeyUsage)
        {
            Respond(reply, key, failed, "operator requires issuer to be a signing key");
            return;
        }

        if (cache && !accounts.IsRegistered(key))
        {
            Respond(reply, key, "jwt update cache skipped", null);
            return;
        }

        if (Validate(claims, token) is { } invalid)
        {
            Respond(reply, key, cache ? "jwt update cache validation failed" : "jwt validation failed", invalid);
            return;
        }

        var changed = dir.Store.Save(key, token, out var error);
        if (error is not null)
        {
            Respond(reply, key, failed, error);
            return;
        }

        // nats-server's store change callback: an account in use takes the JWT now (a failure is only logged).
        string? updateError = null;
        switch (changed ? accounts.Update(key, token, out updateError) : ClaimsUpdateOutcome.Same)
        {
            case ClaimsUpdateOutcome.Failed:
                ClaimsLog.UpdateFailed(logger, key, updateError!);
                break;
            case ClaimsUpdateOutcome.Applied:
                Changed(key);
                break;
        }

        Respond(reply, key, cache ? "jwt updated cache" : "jwt updated", null);
    }

    // nats-io/jwt AccountClaims.Validate's blocking errors that this broker checks: the permissions it compiles.
    private static string? Validate(AccountClaims claims, string token)
    {
        try
        {
            AccountJwt.Create(token, claims, TimeProvider.System);
            return null;
        }
        catch (InvalidOperationException ex)
        {
            return $"validation errors: [{ex.Message}]";
        }
    }

    /// <summary>
    /// nats-server <c>respondToUpdate</c>: logged (debug when it worked, error when not), and answered with
    /// <c>{"data":{"account","code":200,"message"},"server"}</c> or <c>{"error":{"account","code":500,"description":
    /// "&lt;message&gt; - &lt;error&gt;"},"server"}</c> (Go marshals its map with the keys sorted).
    /// </summary>
    private void Respond(string reply, string? account, string message, string? error)
    {
        if (error is null)
        {
            ClaimsLog.Updated(logger, message, account ?? string.Empty);
        }
        else
        {
            ClaimsLog.Refused(logger, message, account ?? string.Empty, error);
        }

        if (reply.Length == 0)
        {
            return;
        }

        var buffer = new ArrayBufferWriter<byte>(512);
        using (var writer = new Utf8JsonWriter(buffer, WriterOptions))
        {
            writer.WriteStartObject();
            writer.WriteStartObject(error is null ? "data" : "error");
            if (account is not null)
            {
                writer.WriteString("account", account);
            }

            writer.WriteNumber("code", error is null ? 200 : 500);
            if (error is null)
            {
                writer.WriteString("message", message);
            }
            else
            {
                writer.WriteString("description", message + " - " + error);
            }

            writer.WriteEndObject();
            server.Write(writer);
            writer.WriteEndObject();
        }

        Send(reply, buffer.WrittenSpan.ToArray());
    }

    /// <summary>Answers the request being handled: sent when its handling ends (<see cref="HandleAfterAsync"/>).</summary>
    private void Send(string subject, byte[] payload) => answers.Add((subject, payload));

    private sealed record Request(string Subject, string Reply, string Body);
}
