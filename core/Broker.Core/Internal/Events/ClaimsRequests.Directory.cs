using System.Buffers;
using System.Text;
using System.Text.Json;
using Broker.Core.Internal.Accounts.Resolvers;
using Broker.Core.Internal.Jwt;

namespace Broker.Core.Internal.Events;

/// <summary>
/// The requests that read or change the resolver's directory as a whole: <c>LOOKUP</c>, <c>PACK</c>, <c>LIST</c> and
/// <c>DELETE</c> (nats-server accounts.go, the lookup and pack handlers of <c>DirAccResolver.Start</c>,
/// <c>handleListRequest</c>, <c>handleDeleteRequest</c>).
/// </summary>
internal sealed partial class ClaimsRequests
{
    /// <summary>nats-server's lookup handler: the stored JWT as the whole reply, or no reply when there is none.</summary>
    private void Lookup(Request request)
    {
        var tokens = request.Subject.Split('.');
        if (request.Reply.Length == 0 || tokens.Length != 6)
        {
            return;
        }

        if (dir!.Store.Load(tokens[3]) is { } token)
        {
            Send(request.Reply, Encoding.UTF8.GetBytes(token));
        }
        else
        {
            ClaimsLog.LookupFailed(logger, tokens[3]);
        }
    }

    /// <summary>nats-server's pack handler: nothing when the hashes match, else one <c>key|jwt</c> per message; then an empty message.</summary>
    private void Pack(Request request)
    {
        if (request.Reply.Length == 0)
        {
            return;
        }

        if (!Encoding.UTF8.GetBytes(request.Body).AsSpan().SequenceEqual(dir!.Store.Hash()))
        {
            foreach (var (key, token) in dir.Store.Walk())
            {
                Send(request.Reply, Encoding.UTF8.GetBytes(key + "|" + token));
            }
        }

        Send(request.Reply, []);
    }

    /// <summary>nats-server <c>handleListRequest</c>: every stored account's key, in directory order.</summary>
    private void List(Request request)
    {
        if (request.Reply.Length == 0)
        {
            return;
        }

        var buffer = new ArrayBufferWriter<byte>(1024);
        using (var writer = new Utf8JsonWriter(buffer, WriterOptions))
        {
            writer.WriteStartObject();
            writer.WriteStartArray("data");
            foreach (var (key, _) in dir!.Store.Walk())
            {
                writer.WriteStringValue(key);
            }

            writer.WriteEndArray();
            server.Write(writer);
            writer.WriteEndObject();
        }

        Send(request.Reply, buffer.WrittenSpan.ToArray());
    }

    /// <summary>nats-server <c>handleDeleteRequest</c>: a JWT self-signed by the operator listing <c>nats.accounts</c>.</summary>
    private void Delete(Request request)
    {
        var keys = new List<string>();
        string? error;
        if (!GenericJwt.TryDecode(request.Body, out var claims, out error))
        {
            // Answered below with the decoding error.
        }
        else if (dir!.Store.DeleteMode == DirDeleteMode.None)
        {
            error = "delete must be enabled in server config";
        }
        else if (claims.Subject != claims.Issuer)
        {
            error = "not self signed";
        }
        else if (!accounts.OperatorKeys.Contains(claims.Issuer!))
        {
            error = "not trusted";
        }
        else if (claims.Nats.ValueKind != JsonValueKind.Object || !claims.Nats.TryGetProperty("accounts", out var list) || list.ValueKind != JsonValueKind.Array)
        {
            error = "malformed request";
        }
        else
        {
            var system = accounts.SystemAccountName;
            foreach (var entry in list.EnumerateArray())
            {
                if (entry.ValueKind != JsonValueKind.String || entry.GetString() is not { Length: > 0 } key || !DirJwtStore.IsAccountKey(key))
                {
                    error = "malformed request";
                    break;
                }

                if (key == system)
                {
                    error = "not allowed to delete system account";
                    break;
                }

                keys.Add(key);
            }
        }

        if (error is not null)
        {
            Respond(request.Reply, null, $"delete accounts request by {claims?.Subject} failed", error);
            return;
        }

        var errors = new List<string>();
        var deleted = 0;
        foreach (var key in keys)
        {
            var removed = dir!.Store.Delete(key, out var deleteError);
            if (deleteError is not null)
            {
                errors.Add(deleteError);
                continue;
            }

            deleted++;
            if (removed)
            {
                accounts.Remove(key);
                Changed(key);
            }
        }

        if (errors.Count == 0)
        {
            Respond(request.Reply, null, $"deleted {deleted} accounts", null);
        }
        else
        {
            Respond(request.Reply, null, $"deleted {deleted} accounts, failed for {errors.Count}", string.Join('\n', errors));
        }
    }
}
