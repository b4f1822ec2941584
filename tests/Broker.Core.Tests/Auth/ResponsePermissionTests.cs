using System.Text;
using Broker.Core.Auth;
using Broker.Core.Internal.Auth;

namespace Broker.Core.Tests.Auth;

public class ResponsePermissionTests
{
    private readonly ManualTimeProvider clock = new();

    [Fact]
    public void Without_allow_responses_nothing_is_tracked()
    {
        var permissions = PermissionsTemplate.Compile(PublishPermissionTests.Options("", "x")).CreateForConnection();

        Assert.False(permissions.TracksResponses);
        permissions.TrackReply("_INBOX.1"u8);
        Assert.Equal(0, permissions.TrackedReplyCount);
    }

    [Fact]
    public void Allow_responses_alone_permits_only_responses()
    {
        // auth.go validateResponsePermissions; nats-server 2.9.10 refuses PUB x for such a user.
        var permissions = Create(new PermissionsOptions { AllowResponses = new ResponsePermissionOptions() });

        Assert.True(permissions.TracksResponses);
        Assert.False(permissions.CanPublish("x"u8));
        Assert.False(permissions.CanPublish("_INBOX.1"u8));

        permissions.TrackReply("_INBOX.1"u8);
        Assert.True(permissions.CanPublish("_INBOX.1"u8));
        Assert.False(permissions.CanPublish("_INBOX.1"u8)); // one response by default
        Assert.False(permissions.CanPublish("x"u8));
    }

    [Fact]
    public void Allow_responses_with_a_deny_only_list_also_turns_off_the_blanket_allow()
    {
        var options = PublishPermissionTests.Options("", "z");
        options.AllowResponses = new ResponsePermissionOptions();
        var permissions = Create(options);

        Assert.False(permissions.CanPublish("y"u8)); // as nats-server 2.9.10
        permissions.TrackReply("y"u8);
        Assert.True(permissions.CanPublish("y"u8));
    }

    [Fact]
    public void A_deny_entry_does_not_stop_a_response()
    {
        var options = PublishPermissionTests.Options("svc.>", "_INBOX.>");
        options.AllowResponses = new ResponsePermissionOptions();
        var permissions = Create(options);

        permissions.TrackReply("_INBOX.abc"u8);
        Assert.True(permissions.CanPublish("_INBOX.abc"u8));
    }

    [Fact]
    public void Subjects_the_rules_allow_are_not_tracked()
    {
        var options = PublishPermissionTests.Options("svc.>", "");
        options.AllowResponses = new ResponsePermissionOptions();
        var permissions = Create(options);

        permissions.TrackReply("svc.reply"u8);
        Assert.Equal(0, permissions.TrackedReplyCount);
        Assert.True(permissions.CanPublish("svc.reply"u8));
        Assert.True(permissions.CanPublish("svc.reply"u8));
    }

    [Theory]
    [InlineData(1)]
    [InlineData(3)]
    public void Max_messages_limits_responses(int max)
    {
        var permissions = Create(new PermissionsOptions { AllowResponses = new ResponsePermissionOptions { MaxMessages = max } });
        permissions.TrackReply("r"u8);

        for (var i = 0; i < max; i++)
        {
            Assert.True(permissions.CanPublish("r"u8));
        }

        Assert.False(permissions.CanPublish("r"u8));
        Assert.Equal(0, permissions.TrackedReplyCount); // used up rights are gone
    }

    [Theory]
    [InlineData(0)]
    [InlineData(-1)]
    public void Max_messages_zero_or_less_is_unlimited(int max)
    {
        var permissions = Create(new PermissionsOptions { AllowResponses = new ResponsePermissionOptions { MaxMessages = max } });
        permissions.TrackReply("r"u8);

        for (var i = 0; i < 1000; i++)
        {
            Assert.True(permissions.CanPublish("r"u8));
        }
    }

    [Fact]
    public void Rights_expire()
    {
        var permissions = Create(new PermissionsOptions
        {
            AllowResponses = new ResponsePermissionOptions { MaxMessages = 0, Expires = TimeSpan.FromSeconds(10) },
        });
        permissions.TrackReply("r"u8);

        clock.Advance(TimeSpan.FromSeconds(9));
        Assert.True(permissions.CanPublish("r"u8));
        clock.Advance(TimeSpan.FromSeconds(2));
        Assert.False(permissions.CanPublish("r"u8));
        Assert.Equal(0, permissions.TrackedReplyCount);
    }

    [Fact]
    public void Rights_expire_on_the_real_clock()
    {
        var permissions = PermissionsTemplate.Compile(new PermissionsOptions
        {
            AllowResponses = new ResponsePermissionOptions { MaxMessages = 0, Expires = TimeSpan.FromMilliseconds(300) },
        }).CreateForConnection();
        permissions.TrackReply("r"u8);

        Assert.True(permissions.CanPublish("r"u8));
        Thread.Sleep(400);
        Assert.False(permissions.CanPublish("r"u8));
    }

    [Theory]
    [InlineData(0)]
    [InlineData(-1)]
    public void Expires_zero_or_less_is_forever(int seconds)
    {
        var permissions = Create(new PermissionsOptions
        {
            AllowResponses = new ResponsePermissionOptions { MaxMessages = 0, Expires = TimeSpan.FromSeconds(seconds) },
        });
        permissions.TrackReply("r"u8);

        clock.Advance(TimeSpan.FromDays(365));
        Assert.True(permissions.CanPublish("r"u8));
    }

    [Fact]
    public void A_repeated_delivery_renews_the_right()
    {
        var permissions = Create(new PermissionsOptions
        {
            AllowResponses = new ResponsePermissionOptions { MaxMessages = 1, Expires = TimeSpan.FromSeconds(10) },
        });
        permissions.TrackReply("r"u8);
        Assert.True(permissions.CanPublish("r"u8));

        clock.Advance(TimeSpan.FromSeconds(8));
        permissions.TrackReply("r"u8);
        permissions.TrackReply("r"u8);
        clock.Advance(TimeSpan.FromSeconds(8));
        Assert.True(permissions.CanPublish("r"u8));
        Assert.False(permissions.CanPublish("r"u8));
    }

    [Fact]
    public void Granted_responses_do_not_enter_the_publish_cache()
    {
        var options = PublishPermissionTests.Options("svc.>", "");
        options.AllowResponses = new ResponsePermissionOptions { MaxMessages = 0 };
        var permissions = Create(options);

        Assert.True(permissions.CanPublish("svc.a"u8));
        Assert.Equal(1, permissions.PublishCacheCount);

        permissions.TrackReply("_INBOX.1"u8);
        Assert.True(permissions.CanPublish("_INBOX.1"u8));
        Assert.False(permissions.CanPublish("other"u8));
        Assert.Equal(1, permissions.PublishCacheCount);
    }

    [Fact]
    public void Expired_rights_are_swept_when_new_ones_are_recorded()
    {
        var permissions = Create(new PermissionsOptions
        {
            AllowResponses = new ResponsePermissionOptions { Expires = TimeSpan.FromSeconds(1) },
        });
        for (var i = 0; i < 10; i++)
        {
            permissions.TrackReply(Encoding.UTF8.GetBytes("old." + i));
        }

        Assert.Equal(10, permissions.TrackedReplyCount);
        clock.Advance(TimeSpan.FromSeconds(2));
        permissions.TrackReply("new"u8);
        Assert.Equal(1, permissions.TrackedReplyCount);
    }

    [Fact]
    public void The_number_of_rights_is_bounded_and_the_oldest_go_first()
    {
        var template = PermissionsTemplate.Compile(
            new PermissionsOptions { AllowResponses = new ResponsePermissionOptions { MaxMessages = 0, Expires = TimeSpan.Zero } },
            clock,
            maxTrackedReplies: 100);
        var permissions = template.CreateForConnection();

        for (var i = 0; i < 1000; i++)
        {
            clock.Advance(TimeSpan.FromTicks(1));
            permissions.TrackReply(Encoding.UTF8.GetBytes("r." + i));
            Assert.InRange(permissions.TrackedReplyCount, 1, 100);
        }

        Assert.True(permissions.CanPublish("r.999"u8));
        Assert.False(permissions.CanPublish("r.0"u8));
    }

    [Fact]
    public async Task Tracking_is_safe_from_many_producers()
    {
        const int threads = 4;
        const int perThread = 10_000;
        var permissions = Create(new PermissionsOptions { AllowResponses = new ResponsePermissionOptions() });
        var replies = Replies(threads, perThread);

        // Meanwhile the read loop consumes a right that does not exist yet or already does.
        using var stop = new CancellationTokenSource();
        var consumer = Task.Run(() =>
        {
            var used = 0;
            while (!stop.IsCancellationRequested)
            {
                used += permissions.CanPublish(replies[0][0]) ? 1 : 0;
            }

            return used;
        });
        RunTogether(threads, t =>
        {
            foreach (var reply in replies[t])
            {
                permissions.TrackReply(reply);
            }
        });
        await stop.CancelAsync();
        var usedByConsumer = await consumer;

        // Nothing lost, nothing extra: every right recorded once, usable once.
        Assert.InRange(usedByConsumer, 0, 1);
        Assert.Equal((threads * perThread) - usedByConsumer, permissions.TrackedReplyCount);
        for (var t = 0; t < threads; t++)
        {
            for (var i = t == 0 ? usedByConsumer : 0; i < perThread; i++)
            {
                Assert.True(permissions.CanPublish(replies[t][i]));
            }
        }

        Assert.Equal(0, permissions.TrackedReplyCount);
    }

    [Fact]
    public void Tracking_from_many_producers_respects_the_bound()
    {
        var template = PermissionsTemplate.Compile(
            new PermissionsOptions { AllowResponses = new ResponsePermissionOptions() },
            TimeProvider.System,
            maxTrackedReplies: 500);
        var permissions = template.CreateForConnection();
        var replies = Replies(4, 5000);

        RunTogether(4, t =>
        {
            foreach (var reply in replies[t])
            {
                permissions.TrackReply(reply);
            }
        });

        Assert.InRange(permissions.TrackedReplyCount, 1, 500);
    }

    private static byte[][][] Replies(int threads, int perThread) =>
        [.. Enumerable.Range(0, threads).Select(t => Enumerable.Range(0, perThread).Select(i => Encoding.UTF8.GetBytes($"t{t}.{i}")).ToArray())];

    // Dedicated threads released at once, so the producers really overlap.
    private static void RunTogether(int count, Action<int> body)
    {
        using var start = new Barrier(count);
        var failures = new List<Exception>();
        var workers = Enumerable.Range(0, count).Select(t => new Thread(() =>
        {
            start.SignalAndWait();
            try
            {
                body(t);
            }
            catch (Exception e)
            {
                lock (failures)
                {
                    failures.Add(e);
                }
            }
        })).ToList();
        workers.ForEach(w => w.Start());
        workers.ForEach(w => w.Join());
        Assert.Empty(failures);
    }

    private ClientPermissions Create(PermissionsOptions options) => PermissionsTemplate.Compile(options, clock).CreateForConnection();
}
