using Broker.Core.Auth;
using Broker.Core.Internal.Subscriptions;

namespace Broker.Core.Internal.Auth;

/// <summary>
/// A user's permissions compiled once from <see cref="PermissionsOptions"/> and shared by all its connections;
/// each connection gets its own <see cref="ClientPermissions"/> from it. Immutable, so the checks here (which
/// use no cache) are safe from any thread. The rules are nats-server's (<c>client.go</c> <c>setPermissions</c>,
/// <c>canSubscribeInternal</c>, <c>pubAllowedFullCheck</c>, <c>checkDenySub</c>); where we deliberately differ it
/// says so.
/// </summary>
internal sealed partial class PermissionsTemplate
{
    /// <summary>How many reply subjects one connection may hold rights for; the oldest go first beyond it.</summary>
    public const int DefaultMaxTrackedReplies = 65_536;

    private PermissionsTemplate(
        PermissionsOptions source,
        SubjectPatternSet? publishAllow,
        SubjectPatternSet? publishDeny,
        SubjectPatternSet? subscribeAllow,
        SubjectPatternSet? subscribeDeny,
        ResponsePermissionOptions? responses,
        TimeProvider time,
        int maxTrackedReplies)
    {
        Source = source;
        PublishAllow = publishAllow;
        PublishDeny = publishDeny;
        SubscribeAllow = subscribeAllow;
        SubscribeDeny = subscribeDeny;
        Time = time;
        MaxTrackedReplies = maxTrackedReplies;
        if (responses is not null)
        {
            TracksResponses = true;
            MaxResponses = Math.Max(responses.MaxMessages, 0);
            ResponseExpiryTicks = ToTimestampTicks(responses.Expires, time);
        }
    }

    /// <summary>A copy of the options compiled, to compile them again with more (an auth callout's deny).</summary>
    public PermissionsOptions Source { get; }

    /// <summary>Publish allow list, or <see langword="null"/> when publishing is not restricted to a list.</summary>
    public SubjectPatternSet? PublishAllow { get; }

    /// <summary>Publish deny list, or <see langword="null"/> when empty.</summary>
    public SubjectPatternSet? PublishDeny { get; }

    /// <summary>Subscribe allow list (entries may name a queue group), or <see langword="null"/> when empty.</summary>
    public SubjectPatternSet? SubscribeAllow { get; }

    /// <summary>Subscribe deny list (entries may name a queue group), or <see langword="null"/> when empty.</summary>
    public SubjectPatternSet? SubscribeDeny { get; }

    /// <summary>Whether any publish rule exists; without one every publish is allowed and nothing is cached.</summary>
    public bool RestrictsPublish => PublishAllow is not null || PublishDeny is not null;

    /// <summary>Whether <c>allow_responses</c> is on.</summary>
    public bool TracksResponses { get; }

    /// <summary>Responses allowed per received reply subject; 0 means unlimited.</summary>
    public int MaxResponses { get; }

    /// <summary>How long a reply right lasts, in <see cref="Time"/> timestamp ticks; 0 means forever.</summary>
    public long ResponseExpiryTicks { get; }

    /// <summary>Bound on the reply subjects tracked per connection.</summary>
    public int MaxTrackedReplies { get; }

    /// <summary>The clock reply rights are timed with.</summary>
    public TimeProvider Time { get; }

    /// <summary>Compiles permissions.</summary>
    /// <exception cref="InvalidOperationException">A subject or queue entry is malformed.</exception>
    public static PermissionsTemplate Compile(PermissionsOptions options) => Compile(options, TimeProvider.System);

    /// <summary>Compiles permissions with a given clock and reply bound (tests shrink both).</summary>
    /// <exception cref="InvalidOperationException">A subject or queue entry is malformed.</exception>
    public static PermissionsTemplate Compile(PermissionsOptions options, TimeProvider time, int maxTrackedReplies = DefaultMaxTrackedReplies)
    {
        ArgumentNullException.ThrowIfNull(options);
        ArgumentNullException.ThrowIfNull(time);
        ArgumentOutOfRangeException.ThrowIfLessThan(maxTrackedReplies, 1);

        var publishAllow = Create(options.Publish?.Allow, allowQueue: false);
        var publishDeny = Create(options.Publish?.Deny, allowQueue: false);

        // auth.go validateResponsePermissions: allow_responses without a publish allow list turns off the blanket
        // allow, so such a user may publish only responses (plus nothing else), even with a deny-only list.
        if (options.AllowResponses is not null && publishAllow is null)
        {
            publishAllow = SubjectPatternSet.Create([], allowQueue: false);
        }

        return new PermissionsTemplate(
            options.Clone(),
            publishAllow,
            publishDeny,
            Create(options.Subscribe?.Allow, allowQueue: true),
            Create(options.Subscribe?.Deny, allowQueue: true),
            options.AllowResponses,
            time,
            maxTrackedReplies);
    }

    /// <summary>Creates the per-connection state (publish cache, reply rights).</summary>
    public ClientPermissions CreateForConnection() => new(this);

    /// <summary>
    /// The static publish rule, without cache and without reply rights: allowed iff the allow list (if any) has a
    /// matching entry and the deny list has none.
    /// </summary>
    public bool IsPublishAllowed(ReadOnlySpan<byte> subject)
    {
        if (PublishAllow is not null && !PublishAllow.MatchesPlain(subject, SubjectPatternSet.Mode.Covers))
        {
            return false;
        }

        return PublishDeny is null || !PublishDeny.MatchesPlain(subject, SubjectPatternSet.Mode.Tokens);
    }

    /// <summary>
    /// nats-server <c>canSubscribeInternal</c>. Allow: a plain entry matching the subject allows it; but when
    /// subscribing with a queue and queue-restricted allow entries match the subject, the answer is whether one of
    /// them names the queue, even if a plain entry matched (so <c>["foo.&gt;", "foo.bar q1"]</c> refuses
    /// <c>foo.bar</c> in queue <c>q2</c>; verified on nats-server 2.9.10). Queue entries never allow a plain
    /// subscription. Deny: a matching plain entry denies; a matching queue entry denies only subscriptions in that
    /// queue. Deliberately stricter than nats-server: an allow entry usable by the subscription must also cover
    /// every subject it can receive (nats-server lets allow <c>foo.*</c> admit a subscription to <c>foo.&gt;</c>).
    /// </summary>
    public bool IsSubscribeAllowed(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> queue)
    {
        if (SubscribeAllow is { } allow && !IsAllowed(allow, subject, queue))
        {
            return false;
        }

        return SubscribeDeny is null || !IsDenied(SubscribeDeny, subject, queue);
    }

    /// <summary>
    /// Whether a (permitted) subscription can receive messages its deny list forbids, so deliveries to it must be
    /// checked: a wildcard subject colliding with an applicable deny entry (nats-server
    /// <c>loadMsgDenyFilterIfNeeded</c>, which does this per connection; per subscription gives the same results).
    /// </summary>
    public bool NeedsDeliveryCheck(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> queue) =>
        SubscribeDeny is not null && SubjectValidator.HasWildcard(subject) && SubscribeDeny.CollidesWith(subject, queue);

    /// <summary>nats-server <c>checkDenySub</c>: the subscribe-deny list applied to a delivered literal subject.</summary>
    public bool IsDeliveryAllowed(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> queue) =>
        SubscribeDeny is null || !IsDenied(SubscribeDeny, subject, queue);

    private static bool IsAllowed(SubjectPatternSet allow, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> queue)
    {
        // nats-server's rule, matching the way its sublist does (the subject's tokens taken literally).
        const SubjectPatternSet.Mode tokens = SubjectPatternSet.Mode.Tokens;
        var allowed = allow.MatchesPlain(subject, tokens);
        if (!queue.IsEmpty)
        {
            var (anyQueueEntry, queueMatched) = allow.MatchQueue(subject, queue, tokens);
            if (anyQueueEntry)
            {
                allowed = queueMatched;
            }
        }

        // Our addition: something this subscription may use covers all it can receive.
        const SubjectPatternSet.Mode covers = SubjectPatternSet.Mode.Covers;
        return allowed
            && (allow.MatchesPlain(subject, covers) || (!queue.IsEmpty && allow.MatchQueue(subject, queue, covers).QueueMatched));
    }

    private static bool IsDenied(SubjectPatternSet deny, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> queue) =>
        deny.MatchesPlain(subject, SubjectPatternSet.Mode.Tokens)
        || (!queue.IsEmpty && deny.MatchQueue(subject, queue, SubjectPatternSet.Mode.Tokens).QueueMatched);

    // An empty list imposes nothing (nats-server's config parser turns an empty array into no list at all).
    private static SubjectPatternSet? Create(IList<string>? entries, bool allowQueue) =>
        entries is null || entries.Count == 0 ? null : SubjectPatternSet.Create(entries, allowQueue);

    private static long ToTimestampTicks(TimeSpan duration, TimeProvider time)
    {
        if (duration <= TimeSpan.Zero)
        {
            return 0;
        }

        var ticks = duration.TotalSeconds * time.TimestampFrequency;
        return ticks >= long.MaxValue ? long.MaxValue : Math.Max(1, (long)ticks);
    }
}
