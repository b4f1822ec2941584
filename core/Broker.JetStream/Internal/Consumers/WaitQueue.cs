namespace Broker.JetStream.Internal.Consumers;

/// <summary>A pull request waiting for messages (nats-server <c>waitingRequest</c>).</summary>
internal sealed class WaitingRequest
{
    /// <summary>Where messages and status replies go (the request's reply subject).</summary>
    public required byte[] Reply { get; init; }

    /// <summary>Messages still wanted.</summary>
    public int Remaining { get; set; }

    /// <summary>Messages delivered so far.</summary>
    public int Delivered { get; set; }

    /// <summary>Bytes still allowed (<c>max_bytes</c>); 0 means no byte limit.</summary>
    public long BytesLeft { get; set; }

    /// <summary>When the request expires (ns since the Unix epoch), 0 for never.</summary>
    public long Expires { get; init; }

    /// <summary>The idle heartbeat interval (ns), 0 for none.</summary>
    public long Heartbeat { get; init; }

    /// <summary>When the next idle heartbeat is due (ns since the Unix epoch).</summary>
    public long NextHeartbeat { get; set; }

    public bool NoWait { get; init; }

    /// <summary>2.11: the priority fields of a JSON request (its group, overflow minimums, pin id), null for others.</summary>
    public PullPriority? Priority { get; set; }
}

/// <summary>
/// The pull requests of a consumer, served round-robin (nats-server <c>waitQueue</c>): a request that still wants
/// messages goes to the back after each delivery. Bounded by <c>max_waiting</c>. Guarded by the consumer's lock.
/// </summary>
internal sealed class WaitQueue(int capacity)
{
    private readonly LinkedList<WaitingRequest> requests = new();

    public int Count => requests.Count;

    public int Capacity { get; set; } = capacity;

    public bool IsFull => Capacity > 0 && requests.Count >= Capacity;

    /// <summary>When the last request arrived (ns since the Unix epoch), for inactivity.</summary>
    public long LastRequest { get; set; }

    public WaitingRequest? Head => requests.First?.Value;

    public IEnumerable<WaitingRequest> All => requests;

    public bool TryAdd(WaitingRequest request)
    {
        if (IsFull)
        {
            return false;
        }

        requests.AddLast(request);
        return true;
    }

    public void Remove(WaitingRequest request) => requests.Remove(request);

    /// <summary>The head goes to the back (nats-server <c>cycle</c>): a request that must wait lets the others go first.</summary>
    public void Cycle()
    {
        if (requests.First is { } first && requests.Count > 1)
        {
            requests.RemoveFirst();
            requests.AddLast(first);
        }
    }

    /// <summary>After a delivery to the head: done requests leave, others move to the back.</summary>
    public void AfterDelivery(WaitingRequest request)
    {
        if (request.Remaining <= 0)
        {
            requests.Remove(request);
        }
        else if (requests.Count > 1 && ReferenceEquals(requests.First?.Value, request))
        {
            requests.RemoveFirst();
            requests.AddLast(request);
        }
    }

    public List<WaitingRequest> Drain()
    {
        var all = requests.ToList();
        requests.Clear();
        return all;
    }
}
