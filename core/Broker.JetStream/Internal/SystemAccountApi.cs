using System.Buffers;
using System.Text;
using Broker.Abstractions;
using Broker.JetStream.Internal.Api;
using Broker.JetStream.Internal.Models;

namespace Broker.JetStream.Internal;

/// <summary>
/// The JetStream API in the system account, which never has JetStream of its own (nats-server's system
/// subscriptions and <c>apiDispatch</c> for a request that comes straight from a system user): <c>$JS.API.INFO</c>
/// answers 10039 "JetStream not enabled for account", <c>$JS.API.ACCOUNT.PURGE.&lt;account&gt;</c> deletes every
/// stream of the named account and its store folder (<see cref="PurgeAsync"/>, on the engine's API queue), and
/// every other <c>$JS.API</c> subject gets no reply (not a no-responders status: nats-server's catch-all subscription
/// takes them). Only users of the system account reach it; the purge request of another account's user gets no
/// reply, as nats-server 2.11.2 on (2.9.10 purged for any account's user whose request reached the system account
/// through its <c>$JS.API</c> import, and followed path separators in the name out of the store folder).
/// </summary>
internal sealed class SystemAccountApi : IAsyncDisposable
{
    private const string PurgePrefix = "$JS.API.ACCOUNT.PURGE.";
    private static readonly byte[] InfoReply = JetStreamDisabledAccount.ReplyTo("$JS.API.INFO", default)!;
    private static readonly ApiError PathSeparators = new(500, 10051, "account name can not contain path separators");

    private readonly JetStreamEngine engine;
    private readonly IBusClient client;
    private readonly IBusSubscription subscription;

    public SystemAccountApi(JetStreamEngine engine, string account)
    {
        this.engine = engine;
        Account = account;
        client = engine.Bus.CreateClient(new BusClientOptions { Name = "JetStream API", Account = account });
        subscription = client.Subscribe(ApiSubjects.All, null, OnRequest);
    }

    /// <summary>The system account's name.</summary>
    public string Account { get; }

    public async ValueTask DisposeAsync()
    {
        subscription.Dispose();
        await client.DisposeAsync().ConfigureAwait(false);
    }

    /// <summary>
    /// <c>$JS.API.ACCOUNT.PURGE.&lt;account&gt;</c> (nats-server <c>jsLeaderAccountPurgeRequest</c>, single server):
    /// deletes the account's streams with their consumers and data, then its folder
    /// <c>&lt;store_dir&gt;/jetstream/&lt;account&gt;</c>, and answers <c>initiated: true</c>; an unknown account or one
    /// without JetStream is purged of nothing and answered the same. The body is ignored. The account keeps
    /// JetStream and may create streams again. Not counted in any account's API totals (the system account has none).
    /// </summary>
    public async Task PurgeAsync(ApiRequest request)
    {
        var name = request.Subject[PurgePrefix.Length..];
        var response = new ApiResponse("account_purge_response");
        if (name.AsSpan().IndexOfAny('/', '\\') >= 0)
        {
            // nats-server 2.9.10 removes <store_dir>/jetstream/<name> whatever the name holds; later versions refuse.
            Reply(request, response.WithError(PathSeparators));
            return;
        }

        var account = engine.FindAccount(name);
        var streams = account?.StreamsByName() ?? [];
        JetStreamLog.AccountPurge(engine.Logger, name, streams.Count, engine.KnowsAccount(name) ? "true" : "false");
        foreach (var stream in streams)
        {
            try
            {
                account!.RemoveStream(stream);
                await stream.StopAsync(deleteData: true).ConfigureAwait(false);
            }
#pragma warning disable CA1031 // Any failure of a store is the request's answer (nats-server's 10050), as a stream delete's.
            catch (Exception ex)
#pragma warning restore CA1031
            {
                Reply(request, response.WithError(new ApiError(500, 10050, ex.Message)));
                return;
            }
        }

        try
        {
            var folder = Path.Combine(engine.Options.EffectiveStoreDirectory, "jetstream", name);
            if (Directory.Exists(folder))
            {
                Directory.Delete(folder, recursive: true);
            }
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            Reply(request, response.WithError(new ApiError(500, 10051, ex.Message)));
            return;
        }

        Reply(request, response.WithField("initiated", "true"));
    }

    private void Reply(ApiRequest request, ApiResponse response)
    {
        if (request.Reply is { Length: > 0 } reply)
        {
            client.Publish(reply, response.ToBytes());
        }
    }

    private void OnRequest(in BusMessage message)
    {
        var subject = message.Subject;
        if (subject.SequenceEqual("$JS.API.INFO"u8))
        {
            if (!message.ReplyTo.IsEmpty)
            {
                client.Publish(message.ReplyTo, default, default, new ReadOnlySequence<byte>(InfoReply));
            }

            return;
        }

        // One token after the prefix (a subscription on PURGE.* in nats-server); the purge runs on the API queue,
        // never on the publisher's thread, with or without a reply subject.
        if (subject.Length > PurgePrefix.Length && subject.StartsWith("$JS.API.ACCOUNT.PURGE."u8) && subject[PurgePrefix.Length..].IndexOf((byte)'.') < 0)
        {
            engine.EnqueueSystem(new ApiRequest(
                Encoding.UTF8.GetString(subject),
                message.ReplyTo.IsEmpty ? null : Encoding.UTF8.GetString(message.ReplyTo),
                [],
                []));
        }
    }
}
