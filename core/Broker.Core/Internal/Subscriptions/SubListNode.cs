using Broker.Abstractions;

namespace Broker.Core.Internal.Subscriptions;

/// <summary>
/// One token position of one subscription subject in the <see cref="SubList"/> trie: the subscriptions whose subject
/// ends here, and the level below for longer subjects. Only touched under the SubList lock; readers of the trie hold
/// it too, so the collections need no synchronisation of their own.
/// </summary>
internal sealed class SubListNode
{
    // Both created on first use: most nodes are intermediate tokens that hold no subscription at all. The first plain
    // subscription is kept in a field and a set made from the second on: most subjects that end here have one
    // subscriber (an MQTT session's topic, a request inbox), and a one-member set cost each about 170 B (issue 25).
    private Subscription? single;
    private HashSet<Subscription>? plain;
    private Dictionary<byte[], HashSet<Subscription>>? queues;

    /// <summary>The level of the next token, or <see langword="null"/> when no subject continues past this node.</summary>
    public SubListLevel? Next { get; set; }

    /// <summary>No subscription ends here and nothing continues below: the node can be pruned.</summary>
    public bool IsEmpty => single is null && (plain is null || plain.Count == 0) && (queues is null || queues.Count == 0) && Next is null;

    /// <summary>Appends the plain subscriptions ending here to <paramref name="into"/>.</summary>
    public void CopyPlainTo(List<Subscription> into)
    {
        if (single is not null)
        {
            into.Add(single);
        }
        else if (plain is not null)
        {
            into.AddRange(plain);
        }
    }

    /// <summary>Queue subscriptions ending here, by queue name (may be <see langword="null"/>).</summary>
    public Dictionary<byte[], HashSet<Subscription>>? Queues => queues;

    /// <summary>Adds a subscription; false when this very instance is already here.</summary>
    public bool Add(Subscription subscription)
    {
        if (!SubList.IsQueue(subscription))
        {
            if (plain is not null)
            {
                return plain.Add(subscription);
            }

            if (single is null)
            {
                single = subscription;
                return true;
            }

            if (ReferenceEquals(single, subscription))
            {
                return false;
            }

            plain = [single, subscription];
            single = null;
            return true;
        }

        queues ??= new Dictionary<byte[], HashSet<Subscription>>(ByteArrayComparer.Instance);
        if (!queues.TryGetValue(subscription.Queue!, out var members))
        {
            members = [];
            queues.Add(subscription.Queue!, members);
        }

        return members.Add(subscription);
    }

    /// <summary>Removes a subscription; false when it was not here.</summary>
    public bool Remove(Subscription subscription)
    {
        if (!SubList.IsQueue(subscription))
        {
            if (ReferenceEquals(single, subscription))
            {
                single = null;
                return true;
            }

            return plain is not null && plain.Remove(subscription);
        }

        if (queues is null || !queues.TryGetValue(subscription.Queue!, out var members) || !members.Remove(subscription))
        {
            return false;
        }

        // A group without members must go, or results would carry empty groups and the node would never prune.
        if (members.Count == 0)
        {
            queues.Remove(subscription.Queue!);
        }

        return true;
    }

    /// <summary>Appends every subscription ending here to <paramref name="into"/>.</summary>
    public void CopyTo(List<Subscription> into)
    {
        CopyPlainTo(into);
        if (queues is not null)
        {
            foreach (var members in queues.Values)
            {
                into.AddRange(members);
            }
        }
    }
}

/// <summary>
/// The children of one token position: literal tokens by their bytes, plus the single <c>*</c> and <c>&gt;</c>
/// children. Keeping the wildcards out of the map is what lets a match take the literal branch with one lookup.
/// </summary>
internal sealed class SubListLevel
{
    // Created on first literal child; levels below a wildcard often hold only wildcards.
    private Dictionary<byte[], SubListNode>? literals;
    private Dictionary<byte[], SubListNode>.AlternateLookup<ReadOnlySpan<byte>> literalLookup;

    /// <summary>The child for a <c>*</c> token.</summary>
    public SubListNode? SingleWildcard { get; private set; }

    /// <summary>The child for a <c>&gt;</c> token.</summary>
    public SubListNode? FullWildcard { get; private set; }

    public bool IsEmpty => (literals is null || literals.Count == 0) && SingleWildcard is null && FullWildcard is null;

    /// <summary>Every child, for walks over the whole trie (monitoring, not matching).</summary>
    public IEnumerable<SubListNode> Children
    {
        get
        {
            if (literals is not null)
            {
                foreach (var node in literals.Values)
                {
                    yield return node;
                }
            }

            if (SingleWildcard is not null)
            {
                yield return SingleWildcard;
            }

            if (FullWildcard is not null)
            {
                yield return FullWildcard;
            }
        }
    }

    /// <summary>
    /// The literal child for a token of a published subject. A lone <c>*</c> or <c>&gt;</c> token finds nothing here,
    /// because subscriptions with those tokens live in the wildcard children.
    /// </summary>
    public SubListNode? FindLiteral(ReadOnlySpan<byte> token) =>
        literals is not null && literalLookup.TryGetValue(token, out var node) ? node : null;

    /// <summary>The child a subscription token leads to, wildcards included.</summary>
    public SubListNode? Find(ReadOnlySpan<byte> token) => WildcardOf(token) switch
    {
        SubjectValidator.SingleWildcard => SingleWildcard,
        SubjectValidator.FullWildcard => FullWildcard,
        _ => FindLiteral(token),
    };

    /// <summary>The child a subscription token leads to, created when missing.</summary>
    public SubListNode GetOrAdd(ReadOnlySpan<byte> token)
    {
        switch (WildcardOf(token))
        {
            case SubjectValidator.SingleWildcard:
                return SingleWildcard ??= new SubListNode();
            case SubjectValidator.FullWildcard:
                return FullWildcard ??= new SubListNode();
        }

        if (literals is null)
        {
            literals = new Dictionary<byte[], SubListNode>(ByteArrayComparer.Instance);
            literalLookup = literals.GetAlternateLookup<ReadOnlySpan<byte>>();
        }

        if (!literalLookup.TryGetValue(token, out var node))
        {
            node = new SubListNode();
            literalLookup[token] = node;
        }

        return node;
    }

    /// <summary>Drops the child a subscription token leads to (it has become empty).</summary>
    public void Remove(ReadOnlySpan<byte> token)
    {
        switch (WildcardOf(token))
        {
            case SubjectValidator.SingleWildcard:
                SingleWildcard = null;
                return;
            case SubjectValidator.FullWildcard:
                FullWildcard = null;
                return;
        }

        if (literals is not null)
        {
            literalLookup.Remove(token);
        }
    }

    // The wildcard byte when the token is a lone wildcard, otherwise 0: "*a" or ">>" are literals.
    private static byte WildcardOf(ReadOnlySpan<byte> token) =>
        token.Length == 1 && token[0] is SubjectValidator.SingleWildcard or SubjectValidator.FullWildcard ? token[0] : (byte)0;
}
