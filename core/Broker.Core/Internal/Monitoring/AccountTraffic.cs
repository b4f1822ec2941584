using System.Runtime.CompilerServices;
using Broker.Core.Internal.Accounts;
using Broker.Core.Internal.Clients;

namespace Broker.Core.Internal.Monitoring;

/// <summary>
/// What closed connections sent and received, per account, so /accstatz reports an account's traffic since start
/// and not only its open connections' (nats-server keeps these counters on the account itself). An account's open
/// clients are summed when asked; a closing connection's counters move here when its close is recorded. An account
/// removed by a reload takes its totals with it (the table holds accounts weakly).
/// </summary>
internal sealed class AccountTraffic
{
    private readonly ConditionalWeakTable<Account, Counters> retired = new();

    /// <summary>Adds a closed connection's final counters to its account's totals.</summary>
    public void Retire(ClientBase client)
    {
        var totals = default(Totals);
        totals.Add(client);
        var counters = retired.GetValue(client.Account, static _ => new Counters());
        Interlocked.Add(ref counters.InMessages, totals.InMessages);
        Interlocked.Add(ref counters.InBytes, totals.InBytes);
        Interlocked.Add(ref counters.OutMessages, totals.OutMessages);
        Interlocked.Add(ref counters.OutBytes, totals.OutBytes);
        Interlocked.Add(ref counters.SlowConsumers, totals.SlowConsumers);
    }

    /// <summary>The totals of the account's closed connections.</summary>
    public Totals Retired(Account account)
    {
        if (!retired.TryGetValue(account, out var counters))
        {
            return default;
        }

        return new Totals
        {
            InMessages = Interlocked.Read(ref counters.InMessages),
            InBytes = Interlocked.Read(ref counters.InBytes),
            OutMessages = Interlocked.Read(ref counters.OutMessages),
            OutBytes = Interlocked.Read(ref counters.OutBytes),
            SlowConsumers = Interlocked.Read(ref counters.SlowConsumers),
        };
    }

    /// <summary>
    /// Counters of some clients added up, as nats-server's account counters count: <c>received</c> is what
    /// connections published (in-process clients have no read loop there), <c>sent</c> what was delivered to any
    /// client of the account; slow consumers are the connections closed as such.
    /// </summary>
    public struct Totals
    {
        public long InMessages;
        public long InBytes;
        public long OutMessages;
        public long OutBytes;
        public long SlowConsumers;

        public void Add(ClientBase client)
        {
            OutMessages += Interlocked.Read(ref client.OutMessages);
            OutBytes += Interlocked.Read(ref client.OutBytes);
            if (client is IClientConnection connection)
            {
                InMessages += Interlocked.Read(ref client.InMessages);
                InBytes += Interlocked.Read(ref client.InBytes);
                if (connection.ClosedReasonText is { } reason && reason.StartsWith("Slow Consumer", StringComparison.Ordinal))
                {
                    SlowConsumers++;
                }
            }
        }

        public void Add(in Totals other)
        {
            InMessages += other.InMessages;
            InBytes += other.InBytes;
            OutMessages += other.OutMessages;
            OutBytes += other.OutBytes;
            SlowConsumers += other.SlowConsumers;
        }
    }

    private sealed class Counters
    {
        public long InMessages;
        public long InBytes;
        public long OutMessages;
        public long OutBytes;
        public long SlowConsumers;
    }
}
