package main

// Which starts a caller other than an admin may make: a start that makes exactly the one new run it asks for and
// shapes only that run. A start is another door to an execution that already runs under its id (the id-conflict
// policy TERMINATE_EXISTING, the id-reuse policy TERMINATE_IF_RUNNING, on-conflict options), to more runs than one
// (a cron schedule, a retry policy), to the caller holding a workflow task (eager execution), and to what the
// deployment decides (versioning, time skipping, priority). Every field of StartWorkflowExecutionRequest is
// classified below; a field set in a request that is in neither list (a field of a newer API than this server's
// go.mod, or one nobody classified yet) refuses the start, as do bytes the server's API does not know.
//
// The policies are judged as the server will apply them: unset ones get the frontend's defaults first, with the
// server's own function (go.temporal.io/server/common/enums), so "unspecified" can never mean "terminate" here
// without meaning it in the server too.

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/server/common/enums"
	"google.golang.org/protobuf/reflect/protoreflect"
)

//nolint:staticcheck // SA1019: deprecated, and still what a caller can send (the server reads it as TERMINATE_EXISTING)
const terminateIfRunning = enumspb.WORKFLOW_ID_REUSE_POLICY_TERMINATE_IF_RUNNING

// startDefaultConflictPolicy: the id-conflict policy the frontend gives a StartWorkflowExecution, and the start of
// an ExecuteMultiOperation, that set none (service/frontend/workflow_handler.go, prepareStartWorkflowRequest).
const startDefaultConflictPolicy = enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL

// startFieldsShapingTheNewRun: fields that act on the run the start creates and nothing else, or that the role's
// own rules check (the id's tenant, the workflow type, the task queue, the tenant search attribute).
var startFieldsShapingTheNewRun = []protoreflect.Name{
	"namespace", "workflow_id", "workflow_type", "task_queue", "input",
	"workflow_execution_timeout", "workflow_run_timeout", "workflow_task_timeout",
	"identity", "request_id", "memo", "search_attributes", "header", "user_metadata",
	// Delays this run's first task; it reaches no other execution.
	"workflow_start_delay",
	// Judged by their effective value below.
	"workflow_id_reuse_policy", "workflow_id_conflict_policy",
}

// startFieldsRefused: fields whose mere presence refuses a non-admin's start, with why (the end of "with X: ...").
var startFieldsRefused = map[protoreflect.Name]string{
	"cron_schedule":                   "one start would make a run per tick of the schedule",
	"retry_policy":                    "the server would start the run again each time it fails or times out",
	"request_eager_execution":         "the run's first workflow task would go to the caller, a worker's part",
	"eager_worker_deployment_options": "they are an eager start's, a worker's part",
	"continued_failure":               "only the server's schedules hand a run a previous run's failure",
	"last_completion_result":          "only the server's schedules hand a run a previous run's result",
	"completion_callbacks":            "the server would call out when the run closes, or attach them to the execution running under the id",
	"links":                           "they tie the run, or the execution running under the id, to other executions",
	"on_conflict_options":             "they change the execution running under the id",
	"versioning_override":             "which build runs it is the deployment's decision, an operator's",
	"time_skipping_config":            "the run's timers (its deadline, its approval waits) are not the caller's to skip",
	"priority":                        "the run's place against other tenants' runs is an operator's decision",
}

// Effective policies a non-admin's start may have: none of them terminates, or changes, a running execution.
var (
	startConflictPolicies = []enumspb.WorkflowIdConflictPolicy{
		enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
		// The running execution is returned, unchanged (on-conflict options, which would change it, are refused).
		enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
	}
	startReusePolicies = []enumspb.WorkflowIdReusePolicy{
		enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE_FAILED_ONLY,
		enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
	}
)

// startRefusal: why a caller other than an admin may not make this start ("" when it may). The text ends the
// denial's sentence after the call's description.
func startRefusal(s *workflowservice.StartWorkflowExecutionRequest) string {
	var set []protoreflect.FieldDescriptor
	s.ProtoReflect().Range(func(fd protoreflect.FieldDescriptor, _ protoreflect.Value) bool {
		set = append(set, fd)
		return true
	})
	slices.SortFunc(set, func(a, b protoreflect.FieldDescriptor) int { return cmp.Compare(a.Number(), b.Number()) })
	var why []string
	for _, fd := range set {
		if what, refused := startFieldsRefused[fd.Name()]; refused {
			why = append(why, fmt.Sprintf("with %s: %s", fd.Name(), what))
		} else if !slices.Contains(startFieldsShapingTheNewRun, fd.Name()) {
			why = append(why, fmt.Sprintf("with %s: a start option this authorizer does not know", fd.Name()))
		}
	}
	if len(s.ProtoReflect().GetUnknown()) > 0 {
		why = append(why, "with fields this server's API does not know: unjudged, so refused")
	}
	if policy := startPolicyRefusal(s.GetWorkflowIdReusePolicy(), s.GetWorkflowIdConflictPolicy()); policy != "" {
		why = append(why, policy)
	}
	return strings.Join(why, "; ")
}

// startPolicyRefusal judges the id policies after the frontend's defaults.
func startPolicyRefusal(reuse enumspb.WorkflowIdReusePolicy, conflict enumspb.WorkflowIdConflictPolicy) string {
	asked := fmt.Sprintf("with id-reuse policy %s and id-conflict policy %s", reuseName(reuse), conflictName(conflict))
	enums.SetDefaultWorkflowIDPolicies(&reuse, &conflict, startDefaultConflictPolicy)
	effective := fmt.Sprintf("the server applies %s and %s", reuseName(reuse), conflictName(conflict))
	switch {
	case conflict == enumspb.WORKFLOW_ID_CONFLICT_POLICY_TERMINATE_EXISTING, reuse == terminateIfRunning:
		return fmt.Sprintf("%s: %s, which terminates the execution running under that id", asked, effective)
	case !slices.Contains(startConflictPolicies, conflict) || !slices.Contains(startReusePolicies, reuse):
		return fmt.Sprintf("%s: %s, a policy this authorizer does not know", asked, effective)
	}
	return ""
}

// reuseName, conflictName: `TERMINATE_EXISTING` for WORKFLOW_ID_CONFLICT_POLICY_TERMINATE_EXISTING, the number
// for a value this API does not name.
func reuseName(p enumspb.WorkflowIdReusePolicy) string {
	return enumName(enumspb.WorkflowIdReusePolicy_name, int32(p), "WORKFLOW_ID_REUSE_POLICY_")
}

func conflictName(p enumspb.WorkflowIdConflictPolicy) string {
	return enumName(enumspb.WorkflowIdConflictPolicy_name, int32(p), "WORKFLOW_ID_CONFLICT_POLICY_")
}

func enumName(names map[int32]string, v int32, prefix string) string {
	if name, ok := names[v]; ok {
		return strings.TrimPrefix(name, prefix)
	}
	return fmt.Sprintf("%d", v)
}
