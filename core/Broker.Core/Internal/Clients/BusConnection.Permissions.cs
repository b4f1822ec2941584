using System.Text;
using Broker.Abstractions;
using Broker.Core.Internal.Subscriptions;

namespace Broker.Core.Internal.Clients;

/// <summary>
/// The user's permissions applied to everything the adapter does, as to a NATS connection's PUB and SUB (nats-server
/// <c>client.go</c>): a refusal throws <see cref="BusRefusedException"/> with the text a NATS client gets in its -ERR.
/// Deny rules at delivery and <c>allow_responses</c> are the shared routing path's, as for NATS connections.
/// </summary>
internal sealed partial class BusConnection
{
    protected override void OnPublishing(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> replyTo)
    {
        MarkActivity();
        if (Permissions is { } permissions && !permissions.CanPublish(subject))
        {
            var text = Encoding.UTF8.GetString(subject);
            InProcessLog.PublishViolation(logger, this, text);
            throw new BusRefusedException(BusRefusalReason.PublishPermission, text, "Permissions Violation for Publish to " + GoQuote.Quote(subject));
        }

        if (!replyTo.IsEmpty && IsReservedReply(replyTo))
        {
            var text = Encoding.UTF8.GetString(subject);
            InProcessLog.PublishViolation(logger, this, text);
            throw new BusRefusedException(BusRefusalReason.PublishPermission, text, "Permissions Violation for Publish with Reply of " + GoQuote.Quote(replyTo));
        }
    }

    public bool MayReceive(string subject) =>
        Permissions is not { } permissions || permissions.CanSubscribe(Encoding.UTF8.GetBytes(subject), default);

    protected override void OnSubscribing(Subscription subscription)
    {
        MarkActivity();
        var subject = subscription.Subject;
        var queue = subscription.Queue;
        if (Permissions is { } permissions)
        {
            if (!permissions.CanSubscribe(subject, queue))
            {
                InProcessLog.SubscribeViolation(logger, this, subscription.SubjectString);
                throw new BusRefusedException(
                    BusRefusalReason.SubscribePermission,
                    subscription.SubjectString,
                    "Permissions Violation for Subscription to " + GoQuote.Quote(subject) + (queue is null ? string.Empty : " using queue " + GoQuote.Quote(queue)));
            }

            subscription.CheckDenyOnDelivery = permissions.NeedsDeliveryCheck(subject, queue);
        }

        var maxTokens = Server.Options.MaxSubTokens;
        if (maxTokens > 0 && SubjectValidator.CountTokens(subject) > maxTokens)
        {
            InProcessLog.SubscribeViolation(logger, this, subscription.SubjectString);
            throw new BusRefusedException(
                BusRefusalReason.SubscribePermission,
                subscription.SubjectString,
                "Permissions Violation for Subscription to " + GoQuote.Quote(subject) + ", too many tokens");
        }
    }
}
