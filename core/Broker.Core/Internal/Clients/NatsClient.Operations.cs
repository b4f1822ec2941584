using System.Buffers;
using Broker.Core.Internal.Accounts;
using Broker.Core.Internal.Logging;
using Broker.Core.Internal.Protocol;
using Broker.Core.Internal.Subscriptions;

namespace Broker.Core.Internal.Clients;

/// <summary>PUB/HPUB, SUB, UNSUB, PING, PONG and -ERR from the client, as nats-server's <c>client.go</c>.</summary>
internal sealed partial class NatsClient
{
    internal bool ProcessPublish(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> replyTo, in ReadOnlySequence<byte> headers, in ReadOnlySequence<byte> payload)
    {
        if (!EnsureAuthenticated())
        {
            return false;
        }

        // Pedantic clients get an error for a non-literal subject, but the message still goes out (nats-server).
        if (options.Pedantic && !SubjectValidator.IsValidLiteralSubject(subject))
        {
            SendProtocol(ServerMessages.ErrInvalidPublishSubject);
        }

        // Mapped before the permission check, which sees the mapped subject, as in nats-server's parser.
        if (Account.Mappings is { } mappings)
        {
            subject = MapSubject(mappings, subject);
        }

        if (Permissions is { } permissions && !permissions.CanPublish(subject))
        {
            SendPermissionError("Permissions Violation for Publish to ", subject, default);
            ClientLog.PublishViolation(logger, this, subject);
            return true;
        }

        if (!replyTo.IsEmpty && IsReservedReply(replyTo))
        {
            SendPermissionError("Permissions Violation for Publish with Reply of ", replyTo, default);
            return true;
        }

        if (options.Verbose)
        {
            SendProtocol(ServerMessages.Ok);
        }

        RouteMessage(subject, replyTo, headers, payload);

        // Stopping here ends the batch early when a subscriber asked the producer to yield (see RequestYield).
        return !IsClosed && !YieldRequested;
    }

    internal bool ProcessSubscribe(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> queue, ReadOnlySpan<byte> sid)
    {
        if (!EnsureAuthenticated())
        {
            return false;
        }

        if (Permissions is { } permissions && !permissions.CanSubscribe(subject, queue))
        {
            SendPermissionError("Permissions Violation for Subscription to ", subject, queue);
            ClientLog.SubscribeViolation(logger, this, subject);
            return true;
        }

        var maxTokens = Server.Options.MaxSubTokens;
        if (maxTokens > 0 && SubjectValidator.CountTokens(subject) > maxTokens)
        {
            SendPermissionError("Permissions Violation for Subscription to ", subject, default, ", too many tokens");
            ClientLog.SubscribeViolation(logger, this, subject);
            return true;
        }

        var subscription = new Subscription(this, subject.ToArray(), queue.IsEmpty ? null : queue.ToArray(), sid.ToArray())
        {
            CheckDenyOnDelivery = Permissions?.NeedsDeliveryCheck(subject, queue) ?? false,
        };
        switch (AddSubscription(subscription, ClientLimits.MaxSubscriptions(Server.Options, Account, claims.MaxSubscriptions)))
        {
            case SubscribeOutcome.TooMany:
                ClientLog.MaxSubscriptionsExceeded(logger, this);
                SendProtocol(ServerMessages.ErrMaxSubscriptions);
                return true;
            case SubscribeOutcome.InvalidSubject:
                SendProtocol(ServerMessages.ErrInvalidSubject);
                return true;
        }

        if (options.Verbose)
        {
            SendProtocol(ServerMessages.Ok);
        }

        return true;
    }

    internal bool ProcessUnsubscribe(ReadOnlySpan<byte> sid, long max)
    {
        if (!EnsureAuthenticated())
        {
            return false;
        }

        Unsubscribe(sid, max);
        if (options.Verbose)
        {
            SendProtocol(ServerMessages.Ok);
        }

        return true;
    }

    internal bool ProcessPing()
    {
        if (!EnsureAuthenticated())
        {
            return false;
        }

        SendProtocol(ServerMessages.Pong);
        if (AccountBinding.InfoAfterFirstPong(this, options) is { } info)
        {
            SendProtocol(info);
        }

        return true;
    }

    internal bool ProcessPong()
    {
        if (!EnsureAuthenticated())
        {
            return false;
        }

        keepAlive.PongReceived();
        return true;
    }

    internal bool ProcessClientError(ReadOnlySpan<byte> message)
    {
        ClientLog.ClientSentError(logger, this, message);
        BeginClose(CloseReason.ParseError, default);
        return false;
    }

    protected override void OnSubscriptionRemoved(Subscription subscription)
    {
        if (trace.Enabled)
        {
            trace.TraceSubscriptionRemoved(subscription.SidString);
        }
    }
}
