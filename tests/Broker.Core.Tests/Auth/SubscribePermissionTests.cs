using System.Text;
using Broker.Core.Auth;
using Broker.Core.Internal.Auth;

namespace Broker.Core.Tests.Auth;

public class SubscribePermissionTests
{
    [Theory]
    // allow: an entry must cover the subscription
    [InlineData("foo.*", "", "foo.bar", "", true)]
    [InlineData("foo.*", "", "foo.*", "", true)]
    [InlineData("foo.*", "", "foo.>", "", false)] // nats-server admits this; we require coverage
    [InlineData("foo.*", "", "*.bar", "", false)]
    [InlineData("foo.*", "", "foo", "", false)]
    [InlineData("foo.*", "", "foo.bar.baz", "", false)]
    [InlineData("foo.>", "", "foo.*", "", true)]
    [InlineData("foo.>", "", "foo.>", "", true)]
    [InlineData("foo.>", "", "foo.*.x", "", true)]
    [InlineData("foo.>", "", ">", "", false)]
    [InlineData(">", "", "*.*.>", "", true)]
    [InlineData("foo.bar", "", "foo.*", "", false)]
    // deny: the subscription's tokens are taken literally, as nats-server's sublist does
    [InlineData("", "d.*", "d.x", "", false)]
    [InlineData("", "d.*", "d.*", "", false)]
    [InlineData("", "d.*", "d.>", "", false)] // verified on nats-server 2.9.10
    [InlineData("", "d.*", "d.x.y", "", true)]
    [InlineData("", "d.*", "*.x", "", true)] // allowed, but deliveries are checked
    [InlineData("", "e.bar", "e.*", "", true)] // allowed, but deliveries are checked
    [InlineData("", "e.bar", "e.bar", "", false)]
    [InlineData("", "e.>", "e.*", "", false)]
    [InlineData("", ">", "x", "", false)]
    [InlineData("app.>", "app.secret", "app.secret", "", false)]
    [InlineData("app.>", "app.secret", "app.public", "", true)]
    [InlineData("app.>", "app.secret", "app.*", "", true)]
    // queue-restricted allow entries (all verified on nats-server 2.9.10)
    [InlineData("q.>,q.bar q1", "", "q.bar", "q2", false)] // a matching queue entry overrides the plain allow
    [InlineData("q.>,q.bar q1", "", "q.bar", "q1", true)]
    [InlineData("q.>,q.bar q1", "", "q.bar", "", true)]
    [InlineData("q.>,q.bar q1", "", "q.baz", "q2", true)]
    [InlineData("q.>,q.bar q1", "", "q.*", "q2", true)]
    [InlineData("w.> g.*", "", "w.x", "", false)] // queue entries never admit plain subscriptions
    [InlineData("w.> g.*", "", "w.x", "g.a", true)] // wildcard queue names
    [InlineData("w.> g.*", "", "w.x", "g", false)]
    [InlineData("w.> g.*", "", "w.x", "g.a.b", false)]
    [InlineData("w.> g.>", "", "w.x", "g.a.b", true)]
    [InlineData("q.>,q.* g1", "", "q.>", "g2", false)]
    [InlineData("q.>,q.* g1", "", "q.>", "g1", true)]
    [InlineData("q.* g1", "", "q.>", "g1", false)] // nats-server admits this; we require coverage
    [InlineData("q.* g1", "", "q.x", "g1", true)]
    // queue-restricted deny entries
    [InlineData("", "dq.> q9", "dq.x", "q9", false)]
    [InlineData("", "dq.> q9", "dq.x", "q8", true)]
    [InlineData("", "dq.> q9", "dq.x", "", true)]
    [InlineData("", "x.> grp.*", "x.y", "grp.1", false)]
    [InlineData("", "x.> grp.*", "x.y", "grp", true)]
    [InlineData("", "x.y q1,x.y q2", "x.y", "q2", false)]
    [InlineData("", "x.y q1,x.y q2", "x.y", "q3", true)]
    public void Allow_deny_and_queues(string allow, string deny, string subject, string queue, bool expected)
    {
        var permissions = Create(allow, deny);
        Assert.Equal(expected, permissions.CanSubscribe(Encoding.UTF8.GetBytes(subject), Encoding.UTF8.GetBytes(queue)));
        if (queue.Length == 0)
        {
            Assert.Equal(expected, permissions.CanSubscribe(Encoding.UTF8.GetBytes(subject), default));
        }
    }

    [Theory]
    // plain deny entries
    [InlineData("e.*", "", true)]
    [InlineData(">", "", true)]
    [InlineData("*.x", "", true)] // collides with d.*
    [InlineData("foo.*", "", false)] // cannot meet any deny entry
    [InlineData("e.bar", "", false)] // literal: the subscribe check already decided
    [InlineData("e.*.z", "", false)]
    // queue deny entries apply only to their queue
    [InlineData("dq.*", "", false)]
    [InlineData("dq.*", "q9", true)]
    [InlineData("dq.*", "q8", false)]
    public void Wildcard_subscriptions_overlapping_a_deny_entry_need_delivery_checks(string subject, string queue, bool expected)
    {
        var permissions = Create("", "d.*,e.bar,dq.> q9");
        Assert.Equal(expected, permissions.NeedsDeliveryCheck(Encoding.UTF8.GetBytes(subject), Encoding.UTF8.GetBytes(queue)));
        if (queue.Length == 0)
        {
            Assert.Equal(expected, permissions.NeedsDeliveryCheck(Encoding.UTF8.GetBytes(subject), default));
        }
    }

    [Theory]
    [InlineData("e.bar", "", false)]
    [InlineData("e.baz", "", true)]
    [InlineData("d.x", "", false)]
    [InlineData("f.x", "", true)]
    [InlineData("d.x.y", "", true)]
    [InlineData("dq.x", "q9", false)]
    [InlineData("dq.x", "q8", true)]
    [InlineData("dq.x", "", true)]
    public void Deliveries_are_checked_against_the_deny_list(string subject, string queue, bool expected)
    {
        var permissions = Create("", "d.*,e.bar,dq.> q9");
        Assert.Equal(expected, permissions.IsDeliveryAllowed(Encoding.UTF8.GetBytes(subject), Encoding.UTF8.GetBytes(queue)));
        if (queue.Length == 0)
        {
            Assert.Equal(expected, permissions.IsDeliveryAllowed(Encoding.UTF8.GetBytes(subject), default));
        }
    }

    [Fact]
    public void Without_a_deny_list_nothing_needs_checking()
    {
        var permissions = Create("a.>", "");
        Assert.False(permissions.NeedsDeliveryCheck("a.*"u8, default));
        Assert.True(permissions.IsDeliveryAllowed("a.b"u8, default));
    }

    [Fact]
    public void Delivery_checks_are_safe_from_many_threads()
    {
        var permissions = Create("", "d.*,e.bar");
        var wrong = 0;
        Parallel.For(0, 4, _ =>
        {
            for (var i = 0; i < 20_000; i++)
            {
                if (permissions.IsDeliveryAllowed("d.x"u8, default) || !permissions.IsDeliveryAllowed("e.baz"u8, default))
                {
                    Interlocked.Increment(ref wrong);
                }
            }
        });

        Assert.Equal(0, wrong);
    }

    [Theory]
    [InlineData("foo.*", "foo.bar", true)]
    [InlineData("foo.*", "*.bar", true)]
    [InlineData("foo.*", "bar.*", false)]
    [InlineData("foo.*", "foo.*.x", false)]
    [InlineData("foo.>", "foo.*.x", true)]
    [InlineData("foo.>", "foo", false)]
    [InlineData(">", "a.b.c", true)]
    [InlineData("a.*.c", "*.b.*", true)]
    [InlineData("a.*.c", "*.b.d", false)]
    [InlineData("a.b", "a.b", true)]
    [InlineData("a.b", "a.b.c", false)]
    public void Collisions(string a, string b, bool expected)
    {
        Assert.Equal(expected, SubjectPatternSet.Collide(Encoding.UTF8.GetBytes(a), Encoding.UTF8.GetBytes(b)));
        Assert.Equal(expected, SubjectPatternSet.Collide(Encoding.UTF8.GetBytes(b), Encoding.UTF8.GetBytes(a)));
    }

    [Theory]
    [InlineData("foo bar baz")]
    [InlineData("foo. q")]
    [InlineData("foo q..x")]
    [InlineData(" ")]
    public void Malformed_entries_are_refused(string entry) =>
        Assert.Throws<InvalidOperationException>(() => Create(entry, ""));

    private static ClientPermissions Create(string allow, string deny) =>
        PermissionsTemplate.Compile(new PermissionsOptions
        {
            Subscribe = new SubjectPermissionOptions
            {
                Allow = PublishPermissionTests.List(allow),
                Deny = PublishPermissionTests.List(deny),
            },
        }).CreateForConnection();
}
